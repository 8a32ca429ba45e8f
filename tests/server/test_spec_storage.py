"""Storage a machine can make the server spend is bounded: every mapping and list on the wire has a
size limit, and heartbeats keep one spec per machine beyond those its runs were measured on."""

from __future__ import annotations

import secrets

from sqlalchemy import func, select

from app.contracts import MachineSpec
from app.contracts.fleet import LABELS_MAX
from app.db.engine import Database
from app.db.models import SpecSnapshot
from testkit.factories import Api, machine_spec, run_report


def _snapshots(db: Database) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(SpecSnapshot)) or 0)


def _changed(spec: MachineSpec) -> MachineSpec:
    """The same machine with a new (large) software stack: a spec that hashes differently."""
    libraries = {f"lib{i}": secrets.token_hex(90) for i in range(128)}
    return spec.model_copy(update={"software": spec.software.model_copy(update={"libraries": libraries})})


def _beat(api: Api, token: str, spec: MachineSpec) -> None:
    body = {"state": "idle", "spec": spec.model_dump(mode="json")}
    response = api.client.post("/api/v1/agents/heartbeat", json=body, headers=api.bearer(token))
    assert response.status_code == 200, response.text


def test_a_machine_pending_approval_keeps_one_spec_whatever_it_sends(api: Api, db: Database) -> None:
    spec = machine_spec()
    machine_id, token = api.enroll(spec, approve=False)
    for _ in range(10):
        _beat(api, token, _changed(spec))
    assert _snapshots(db) == 1
    latest = _changed(spec)
    _beat(api, token, latest)
    shown = api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()["spec"]
    assert shown["software"]["libraries"] == latest.software.libraries  # the latest replaced the others


def test_an_approved_machine_keeps_the_specs_its_runs_used_and_its_latest(api: Api, db: Database) -> None:
    spec = machine_spec()
    _machine_id, token = api.enroll(spec)
    assert api.post_run(token, run_report(spec)).status_code == 201
    for _ in range(5):
        _beat(api, token, _changed(spec))
    assert _snapshots(db) == 2
    measured = _changed(spec)
    assert api.post_run(token, run_report(measured)).status_code == 201
    for _ in range(5):
        _beat(api, token, _changed(spec))
    assert _snapshots(db) == 3
    _beat(api, token, spec)  # back to the first: no new row, and it is the latest again
    assert _snapshots(db) == 2


def test_labels_and_selectors_are_bounded(api: Api) -> None:
    machine_id, _token = api.enroll()
    many = {f"k{i}": "v" for i in range(LABELS_MAX + 1)}
    labels = api.client.put(f"/api/v1/machines/{machine_id}/labels", json={"labels": many}, headers=api.admin)
    assert labels.status_code == 422 and "body.labels" in labels.text
    job = api.client.post("/api/v1/jobs", json={"suite": "quick", "selector": many}, headers=api.admin)
    assert job.status_code == 422 and "body.selector" in job.text
    enough = {f"k{i}": "v" for i in range(LABELS_MAX)}
    assert api.client.put(
        f"/api/v1/machines/{machine_id}/labels", json={"labels": enough}, headers=api.admin
    ).is_success


def test_every_list_a_client_sends_is_bounded(api: Api) -> None:
    """Lists outside the fleet's models: a recommendation's constraints, a job's suite grid."""
    asked = {"workload": "resnet50", "constraints": {"runtimes": ["torch-eager"] * 65}}
    too_many = api.client.post("/api/v1/recommendations", json=asked, headers=api.admin)
    assert too_many.status_code == 422 and "body.constraints.runtimes" in too_many.text
    workloads = ", ".join(f'"w{i}"' for i in range(65))
    suite = f'name = "wide"\n[[grid]]\nworkloads = [{workloads}]\n'
    job = {"suite": "wide", "suite_toml": suite, "selector": {"cpu_arch": "x86_64"}}
    refused = api.client.post("/api/v1/jobs", json=job, headers=api.admin)
    assert refused.status_code == 409 and "workloads" in refused.json()["detail"]
