"""The real server process (uvicorn on a loopback port), spoken to over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import BACKENDS, ScratchDatabases
from tests.factories import machine_spec, result, run_report

ADMIN = "process-admin-token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server_process(database_url: str, data_dir: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "HWADVISOR_DATABASE_URL": database_url,
        "HWADVISOR_ADMIN_TOKEN": ADMIN,
        "HWADVISOR_DATA_DIR": str(data_dir),
    }
    log = (data_dir / f"server-{port}.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "server", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"server did not start:\n{Path(log.name).read_text()}")
            time.sleep(0.1)
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_agent_path_over_http_survives_a_server_restart(
    backend: str, scratch: ScratchDatabases, tmp_path: Path
) -> None:
    url = scratch.new(backend)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    spec = machine_spec()
    report = run_report(spec, results=[result(batch_size=b) for b in (1, 2, 4)])
    with server_process(url, tmp_path) as base, httpx.Client(base_url=base, timeout=10) as http:
        enrollment = http.post("/api/v1/tokens", json={"kind": "enrollment", "max_uses": 1}, headers=admin)
        assert enrollment.status_code == 201, enrollment.text
        enrolled = http.post(
            "/api/v1/agents/enroll",
            json={"spec": spec.model_dump(mode="json")},
            headers={"Authorization": f"Bearer {enrollment.json()['token']}"},
        )
        assert enrolled.status_code == 201, enrolled.text
        assert enrolled.json()["status"] == "pending"
        machine_id = enrolled.json()["machine_id"]
        machine = {"Authorization": f"Bearer {enrolled.json()['machine_token']}", "content-type": "application/json"}
        assert http.post(f"/api/v1/machines/{machine_id}/approve", headers=admin).status_code == 200
        assert http.post("/api/v1/runs", content=report.model_dump_json(), headers=machine).status_code == 201

    with server_process(url, tmp_path) as base, httpx.Client(base_url=base, timeout=10) as http:
        again = http.post("/api/v1/runs", content=report.model_dump_json(), headers=machine)
        assert again.status_code == 200
        results = http.get("/api/v1/results", params={"machine_id": machine_id}, headers=admin).json()
        assert results["total"] == 3
        assert sorted(r["batch_size"] for r in results["items"]) == [1, 2, 4]
