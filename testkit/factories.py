"""Test data: machine specs from a replayed real H100 machine, results, run reports, and an API helper."""

from __future__ import annotations

import functools
import secrets
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from app.contracts import MachineSpec, Result, RunReport, TokenKind
from app.db import machines, tokens
from app.db.engine import Database
from app.probes import probe_machine
from app.probes.sources import FixtureSources
from testkit import MACHINES
from testkit.nvml import ReplayNvml

H100 = MACHINES / "h100"
H100_SM_COUNT = 132


@functools.cache
def h100_spec() -> MachineSpec:
    nvml = ReplayNvml.from_probe_json(H100 / "probe.json")
    return probe_machine(FixtureSources(H100), nvml=nvml, cuda_sm_counts={nvml.gpus[0]["uuid"]: H100_SM_COUNT})


def machine_spec(**changes: Any) -> MachineSpec:
    """A distinct machine: the replayed H100 with its own fingerprint and hostname."""
    values = {"fingerprint": secrets.token_hex(16), "hostname": f"node-{secrets.token_hex(3)}", **changes}
    return h100_spec().model_copy(update=values)


def result(**changes: Any) -> Result:
    values: dict[str, Any] = {
        "workload": "resnet50",
        "task": "infer",
        "runtime": "torch-eager",
        "device": "cuda:0",
        "precision": "bf16",
        "batch_size": 256,
        "threads": None,
        "status": "ok",
        "throughput_samples_per_s": 9069.0,
        "latency_p50_ms": 28.2,
        "latency_p90_ms": 28.9,
        "latency_p99_ms": 29.6,
        "latency_mean_ms": 28.3,
        "latency_ci95_low_ms": 28.0,
        "latency_ci95_high_ms": 28.4,
        "cv": 0.012,
        "iterations": 120,
        "stable": True,
        "peak_memory_mb": 21000.0,
        "mean_power_w": 610.0,
        "energy_per_sample_j": 0.067,
        "power_source": "nvml",
        **changes,
    }
    if "/" in values["workload"] and "task" not in changes:
        del values["task"]  # the old spelling 'resnet50/train' names its own task
    return Result.model_validate(values)


def run_report(spec: MachineSpec | None = None, *, results: list[Result] | None = None, **changes: Any) -> RunReport:
    started = datetime.now(UTC) - timedelta(minutes=5)
    values: dict[str, Any] = {
        "run_id": uuid.uuid4(),
        "suite": "quick",
        "started_at": started,
        "finished_at": started + timedelta(minutes=4),
        "agent_version": "0.1.0",
        "machine": spec or h100_spec(),
        "results": results if results is not None else [result(batch_size=b) for b in (1, 8, 64)],
        **changes,
    }
    return RunReport.model_validate(values)


def enrolled(db: Database, spec: MachineSpec) -> uuid.UUID:
    """An approved machine of ``spec`` stored in ``db`` as the server enrols one (with a fresh enrollment
    token), without a server: its id."""
    with db.writing() as session:
        enrollment, _secret = tokens.issue(session, kind=TokenKind.enrollment)
        machine, _token, _status = machines.enroll(
            session, enrollment_token_id=enrollment.id, spec=spec, auto_approve=True
        )
        return machine.id


class Api:
    """Calls on the app as an admin, an agent or a procurement tool would make them."""

    def __init__(self, client: Any, admin_token: str) -> None:
        self.client = client
        self.admin_token = admin_token

    @staticmethod
    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    @property
    def admin(self) -> dict[str, str]:
        return self.bearer(self.admin_token)

    def token(self, kind: str = "enrollment", **body: Any) -> str:
        response = self.client.post("/api/v1/tokens", json={"kind": kind, **body}, headers=self.admin)
        assert response.status_code == 201, response.text
        return str(response.json()["token"])

    def enroll(self, spec: MachineSpec | None = None, *, approve: bool = True) -> tuple[uuid.UUID, str]:
        spec = spec or machine_spec()
        response = self.client.post(
            "/api/v1/agents/enroll", json={"spec": spec.model_dump(mode="json")}, headers=self.bearer(self.token())
        )
        assert response.status_code == 201, response.text
        machine_id = uuid.UUID(response.json()["machine_id"])
        if approve:
            approved = self.client.post(f"/api/v1/machines/{machine_id}/approve", headers=self.admin)
            assert approved.status_code == 200, approved.text
        return machine_id, str(response.json()["machine_token"])

    def post_run(self, token: str, report: RunReport) -> httpx.Response:
        response: httpx.Response = self.client.post(
            "/api/v1/runs",
            content=report.model_dump_json(),
            headers={**self.bearer(token), "content-type": "application/json"},
        )
        return response
