from __future__ import annotations

import logging
import sqlite3
import uuid
from pathlib import Path

import pytest

from app.agent.client import AgentClient
from app.agent.daemon import Agent, backoff_delays
from app.agent.outbox import Outbox
from app.agent.settings import AgentSettings, exposure_warning
from app.contracts import Heartbeat
from app.errors import ConfigError
from testkit.factories import h100_spec, result


def test_results_survive_a_crash_and_come_back_as_one_run(tmp_path: Path) -> None:
    path = tmp_path / "outbox.db"
    outbox = Outbox(path)
    job = uuid.uuid4()
    run_id = outbox.open_run(suite="tiny", agent_version="0.1.0", machine=h100_spec(), job_id=job)
    outbox.add_result(run_id, 1, result(batch_size=1))
    outbox.add_result(run_id, 2, result(batch_size=2))
    outbox.close()  # the agent dies here, with the run still open

    reopened = Outbox(path)
    assert reopened.ready() == []
    assert reopened.recover() == 1
    (report,) = reopened.ready()
    assert report.run_id == run_id and report.job_id == job
    assert [r.batch_size for r in report.results] == [1, 2]
    reopened.delete(run_id)
    assert reopened.pending() == 0


def test_agent_config_is_readable_only_by_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "agent.json"
    AgentSettings(server="http://x", machine_id=uuid.uuid4(), token="secret").save(path)
    assert path.stat().st_mode & 0o777 == 0o600


def test_backoff_grows_with_full_jitter_up_to_its_cap() -> None:
    delay = backoff_delays(base_s=1.0, cap_s=8.0)
    samples = [[delay(attempt) for _ in range(200)] for attempt in range(6)]
    assert all(0 <= d <= 1.0 for d in samples[0])
    assert all(0 <= d <= 8.0 for d in samples[5]) and max(samples[5]) > 4.0


def _filled_outbox(path: Path, results: int) -> uuid.UUID:
    outbox = Outbox(path)
    run_id = outbox.open_run(suite="tiny", agent_version="0.1.0", machine=h100_spec(), job_id=None)
    for seq in range(results):
        outbox.add_result(run_id, seq, result(batch_size=seq + 1))
    outbox.close_run(run_id)
    outbox.close()
    return run_id


@pytest.mark.parametrize("damage", ["overwritten", "torn"])
def test_an_unreadable_outbox_is_set_aside_and_a_fresh_one_started(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "outbox.db"
    if damage == "overwritten":
        path.write_bytes(b"not a database, whatever wrote this" * 100)
    else:  # a crash (or a full disk) cut the file in half
        _filled_outbox(path, results=400)
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = path.stat().st_size
        with path.open("r+b") as handle:
            handle.truncate(size // 2)
    original = path.read_bytes()

    with caplog.at_level(logging.ERROR, logger="hwadvisor.agent"):
        outbox = Outbox(path)
    assert outbox.pending() == 0 and outbox.ready() == []
    assert outbox.set_aside is not None and outbox.set_aside.name.startswith("outbox.db.corrupt-")
    assert outbox.set_aside.read_bytes() == original, "the damaged file is kept as it was, for salvage"
    (line,) = [r.getMessage() for r in caplog.records]
    assert str(path) in line and str(outbox.set_aside) in line and "new, empty outbox" in line
    run_id = outbox.open_run(suite="tiny", agent_version="0.1.0", machine=h100_spec(), job_id=None)
    outbox.close_run(run_id)
    assert [r.run_id for r in outbox.ready()] == [run_id]
    outbox.close()


def test_an_outbox_that_cannot_be_opened_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot open the agent's outbox"):
        Outbox(tmp_path)  # a folder, not a file


def test_a_quarantined_run_is_kept_with_its_reason_but_not_offered_for_upload(tmp_path: Path) -> None:
    path = tmp_path / "outbox.db"
    refused = _filled_outbox(path, results=3)
    behind = _filled_outbox(path, results=1)
    outbox = Outbox(path)
    outbox.quarantine(refused, "the server refused POST /api/v1/runs (409): unknown job", 409)
    assert [r.run_id for r in outbox.ready()] == [behind]
    assert outbox.pending() == 1 and outbox.state_of(refused) == "quarantined"
    (held,) = outbox.quarantined()
    assert (held.run_id, held.results, held.status_code) == (refused, 3, 409) and "unknown job" in held.reason
    outbox.close()

    reopened = Outbox(path)  # kept on disk across restarts
    assert [q.run_id for q in reopened.quarantined()] == [refused]
    assert reopened.release(refused) == 1
    assert {r.run_id for r in reopened.ready()} == {refused, behind}
    reopened.close()


def test_a_run_that_cannot_be_read_back_is_quarantined_and_the_others_still_upload(tmp_path: Path) -> None:
    path = tmp_path / "outbox.db"
    damaged = _filled_outbox(path, results=2)
    fine = _filled_outbox(path, results=1)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET body = '{\"torn\": ' WHERE run_id = ? AND seq = 1", (str(damaged),))
    outbox = Outbox(path)
    assert [r.run_id for r in outbox.ready()] == [fine]
    (held,) = outbox.quarantined()
    assert held.run_id == damaged and held.reason.startswith("unreadable in the outbox")
    outbox.close()


def test_a_config_readable_by_others_is_reported_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "agent.json"
    AgentSettings(server="http://x", machine_id=uuid.uuid4(), token="secret").save(path)
    assert exposure_warning(path) is None
    path.chmod(0o644)
    warning = exposure_warning(path)
    assert warning is not None and "its group and every user" in warning and f"chmod 600 {path}" in warning
    path.chmod(0o640)
    assert "readable by its group (" in (exposure_warning(path) or "")


def test_the_heartbeat_note_reports_quarantined_runs(tmp_path: Path) -> None:
    path = tmp_path / "outbox.db"
    refused = _filled_outbox(path, results=1)
    outbox = Outbox(path)
    settings = AgentSettings(server="http://127.0.0.1:9", machine_id=uuid.uuid4(), token="t", outbox=path)
    with AgentClient(settings.server, settings.token) as client:
        agent = Agent(settings, client, outbox)
        assert agent.quarantine_note() is None
        outbox.quarantine(refused, "the server refused POST /api/v1/runs (413): too many results", 413)
        note = agent.quarantine_note()
    assert note is not None and note.startswith("1 run(s) refused by the server, kept in quarantine")
    assert str(refused) in note and "(413)" in note and len(note) <= 2000
    Heartbeat(note=note)  # fits the wire
    outbox.close()
