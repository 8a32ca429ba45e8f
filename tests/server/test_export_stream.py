"""The CSV export streams without holding the database while it waits on the client."""

from __future__ import annotations

import csv
import io
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from app.db import results
from app.db.engine import Database
from app.db.results import ResultFilter
from testkit.factories import Api, machine_spec, result, run_report
from testkit.processes import ADMIN_HEADERS, server_process, stalled_reader
from tests.conftest import ONE_BACKEND, ScratchDatabases

STALLED_READERS = 40  # more than either backend's pool holds (SQLite 8 + 16, PostgreSQL 10 + 20)


def _seed_over_http(http: httpx.Client, *, runs: int, per_run: int) -> None:
    spec = machine_spec()
    token = http.post("/api/v1/tokens", json={"kind": "enrollment"}, headers=ADMIN_HEADERS).json()["token"]
    enrolled = http.post(
        "/api/v1/agents/enroll",
        json={"spec": spec.model_dump(mode="json")},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    http.post(f"/api/v1/machines/{enrolled['machine_id']}/approve", headers=ADMIN_HEADERS).raise_for_status()
    machine = {"Authorization": f"Bearer {enrolled['machine_token']}", "content-type": "application/json"}
    for _ in range(runs):
        report = run_report(spec, results=[result(batch_size=b) for b in range(1, per_run + 1)])
        response = http.post("/api/v1/runs", content=report.model_dump_json(), headers=machine)
        assert response.status_code == 201, response.text


@pytest.mark.parametrize("backend", ONE_BACKEND)
def test_stalled_export_readers_leave_the_service_answering(
    backend: str, scratch: ScratchDatabases, tmp_path: Path
) -> None:
    url = scratch.new(backend)
    with server_process(url, tmp_path) as base, httpx.Client(base_url=base, timeout=20) as http:
        _seed_over_http(http, runs=20, per_run=2000)  # 9 MB an export: more than the kernel buffers for a socket
        with ExitStack() as stack:
            for _ in range(STALLED_READERS):
                stack.enter_context(stalled_reader(base, "/api/v1/results/export.csv"))
            time.sleep(5)  # the streams have filled what the sockets take and wait on their readers
            health = http.get("/healthz")  # before: 503 after the pool's 30 s wait, and so on until a restart
            # Before the exports had their own threads, 40 of them held the shared pool: 16 s (this VM); now 0.2-0.6 s.
            query = http.get("/api/v1/results", params={"limit": 5}, headers=ADMIN_HEADERS, timeout=8)
            assert health.status_code == 200, health.text
            assert query.status_code == 200 and query.json()["total"] == 40_000, query.text
        # The abandoned streams gave their connections back: a full export still completes.
        export = http.get("/api/v1/results/export.csv", headers=ADMIN_HEADERS)
        assert export.status_code == 200
        assert len(list(csv.DictReader(io.StringIO(export.text)))) == 40_000


def test_export_holds_no_connection_between_pages(api: Api, db: Database) -> None:
    machine_id, token = api.enroll()
    api.post_run(token, run_report(results=[result(batch_size=b) for b in range(1, 6)]))
    stream = results.iter_csv(db, ResultFilter(machine_id=machine_id), chunk=2)
    assert next(stream).startswith("id,run_id,machine_id,hostname")
    assert db.engine.pool.checkedout() == 0  # waiting on the consumer: nothing held
    stream.close()  # an abandoned stream
    assert db.engine.pool.checkedout() == 0
    rows = list(csv.reader(io.StringIO("".join(results.iter_csv(db, ResultFilter(machine_id=machine_id), chunk=2)))))
    assert len(rows) == 1 + 5


def test_export_pages_start_small_and_double(api: Api, db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that asks and never reads costs the server one small page, not a full one."""
    monkeypatch.setattr(results, "FIRST_PAGE", 1)
    machine_id, token = api.enroll()
    api.post_run(token, run_report(results=[result(batch_size=b) for b in range(1, 8)]))
    pages = list(results.iter_csv(db, ResultFilter(machine_id=machine_id), chunk=4))
    rows = [len(list(csv.reader(io.StringIO(text)))) for text in pages]
    assert rows == [1 + 1, 2, 4]  # the header, then 1, 2 and 4 of the 7 rows: 7 < 8 ends it
