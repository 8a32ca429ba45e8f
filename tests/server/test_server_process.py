"""The real server process (uvicorn on a loopback port), spoken to over HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from testkit.factories import machine_spec, result, run_report
from testkit.processes import ADMIN, server_process
from tests.conftest import BACKENDS, ScratchDatabases


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
