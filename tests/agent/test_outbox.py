from __future__ import annotations

import uuid
from pathlib import Path

from app.agent.daemon import backoff_delays
from app.agent.outbox import Outbox
from app.agent.settings import AgentSettings
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
