"""The server never acknowledges a write it cannot persist, and /healthz says so (a real server process)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.contracts import MachineSpec
from testkit.factories import machine_spec, run_report
from testkit.processes import ADMIN_HEADERS, server_process
from tests.conftest import PG_ENV, PG_URL, ScratchDatabases


class Lab:
    """One approved machine on a running server, uploading runs over HTTP."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.spec: MachineSpec = machine_spec()
        token = http.post("/api/v1/tokens", json={"kind": "enrollment"}, headers=ADMIN_HEADERS).json()["token"]
        enrolled = http.post(
            "/api/v1/agents/enroll",
            json={"spec": self.spec.model_dump(mode="json")},
            headers={"Authorization": f"Bearer {token}"},
        ).json()
        self.machine_id = enrolled["machine_id"]
        http.post(f"/api/v1/machines/{self.machine_id}/approve", headers=ADMIN_HEADERS).raise_for_status()
        self.headers = {"Authorization": f"Bearer {enrolled['machine_token']}", "content-type": "application/json"}

    def upload(self) -> httpx.Response:
        return self.http.post("/api/v1/runs", content=run_report(self.spec).model_dump_json(), headers=self.headers)


def _refused(response: httpx.Response, words: str) -> dict[str, Any]:
    """A 503 problem that names the cause, with the request id and Retry-After."""
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "5" and response.headers["x-request-id"]
    problem: dict[str, Any] = response.json()
    assert problem["title"] == "Database unavailable" and words in problem["detail"], problem
    return problem


@contextmanager
def _sqlite_server(tmp_path: Path) -> Iterator[tuple[httpx.Client, Path]]:
    database = tmp_path / "data" / "hwadvisor.db"
    with server_process(f"sqlite:///{database}", tmp_path) as base, httpx.Client(base_url=base, timeout=20) as http:
        yield http, database


def test_deleting_the_database_folder_refuses_writes_instead_of_losing_them(tmp_path: Path) -> None:
    with _sqlite_server(tmp_path) as (http, database):
        lab = Lab(http)
        assert lab.upload().status_code == 201
        shutil.rmtree(database.parent)  # before: 201 to a deleted file, and the runs were gone at restart
        _refused(lab.upload(), "is gone")
        _refused(http.get("/healthz"), "is gone")
        _refused(http.get("/api/v1/machines", headers=ADMIN_HEADERS), "is gone")


def test_replacing_the_database_file_refuses_writes(tmp_path: Path) -> None:
    with _sqlite_server(tmp_path) as (http, database):
        lab = Lab(http)
        assert lab.upload().status_code == 201
        copy = database.with_name("copy.db")
        shutil.copyfile(database, copy)
        os.replace(copy, database)  # a restore under a running server: it kept writing to the old file
        _refused(lab.upload(), "was replaced")
        _refused(http.get("/healthz"), "was replaced")


def _chattr(flag: str, path: Path) -> bool:
    return subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False).returncode == 0


def test_a_read_only_database_file_is_named_and_healthz_fails(tmp_path: Path) -> None:
    """Immutable, so that it is read-only even to root (who ignores file modes)."""
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr to make the file read-only even to root")
    with _sqlite_server(tmp_path) as (http, database):
        lab = Lab(http)
        assert lab.upload().status_code == 201
        if not _chattr("+i", database):
            pytest.skip("this file system cannot mark a file immutable")
        try:
            # before: /healthz 200, and uploads 201 or 'cannot be reached right now' by connection
            _refused(http.get("/healthz"), "is read-only")
            _refused(lab.upload(), "is read-only")
            machines = http.get("/api/v1/machines", headers=ADMIN_HEADERS)
            assert machines.status_code == 200 and machines.json()["total"] == 1  # reads go on
        finally:
            _chattr("-i", database)
        assert http.get("/healthz").status_code == 200  # writable again: no restart needed
        assert lab.upload().status_code == 201


@contextmanager
def _session_on(url: str) -> Iterator[Any]:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


def _set_read_only(url: str, on: bool) -> None:
    """Make the database read-only for new sessions, and end the server's current ones."""
    name = make_url(url).database
    with _session_on(url) as conn:
        conn.execute(text("SET default_transaction_read_only = off"))  # this session's, to undo it
        conn.execute(text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = {"on" if on else "off"}'))
        conn.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = :name AND pid <> pg_backend_pid()"
            ),
            {"name": name},
        )


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason=f"set {PG_ENV} to run against PostgreSQL")
def test_a_read_only_postgresql_is_named_and_healthz_fails(scratch: ScratchDatabases, tmp_path: Path) -> None:
    url = scratch.new("postgres")
    with server_process(url, tmp_path) as base, httpx.Client(base_url=base, timeout=20) as http:
        lab = Lab(http)
        assert lab.upload().status_code == 201
        _set_read_only(url, True)
        try:
            _refused(http.get("/healthz"), "read-only")  # before: 200
            _refused(lab.upload(), "read-only")  # before: 500
            assert http.get("/api/v1/machines", headers=ADMIN_HEADERS).status_code == 200
        finally:
            _set_read_only(url, False)
        assert http.get("/healthz").status_code == 200
        assert lab.upload().status_code == 201
