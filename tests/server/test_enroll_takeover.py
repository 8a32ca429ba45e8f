"""Re-enrolment cannot take a machine over: a fingerprint is not a secret (a read-only key shows it),
so only the machine's current token, or an admin's approval, makes a re-enrolled agent the machine's."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.contracts import MachineSpec
from app.db.engine import Database
from app.db.models import Machine
from app.server.app import create_app
from testkit.factories import Api, machine_spec, run_report


def _reenroll(api: Api, spec: MachineSpec, *, machine_token: str | None = None) -> dict:  # type: ignore[type-arg]
    body: dict[str, object] = {"spec": spec.model_dump(mode="json")}
    if machine_token is not None:
        body["machine_token"] = machine_token
    response = api.client.post("/api/v1/agents/enroll", json=body, headers=api.bearer(api.token()))
    assert response.status_code == 201, response.text
    return dict(response.json())


def _intrude(api: Api, spec: MachineSpec, machine_id: uuid.UUID) -> tuple[MachineSpec, str]:
    """What an intruder with a read-only key learns, and all it needs to describe the machine: the
    forged spec, and the token its re-enrolment gets (awaiting approval)."""
    readonly = api.bearer(api.token("readonly"))
    seen = api.client.get(f"/api/v1/machines/{machine_id}", headers=readonly).json()
    forged = spec.model_copy(update={"fingerprint": seen["fingerprint"], "hostname": "intruder"})
    answer = _reenroll(api, forged)
    assert answer["machine_id"] == str(machine_id) and answer["status"] == "pending"
    return forged, str(answer["machine_token"])


def _beat(api: Api, token: str) -> dict:  # type: ignore[type-arg]
    response = api.client.post("/api/v1/agents/heartbeat", json={"state": "idle"}, headers=api.bearer(token))
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_reenrolling_with_a_known_fingerprint_does_not_take_the_machine_over(api: Api, db: Database) -> None:
    spec = machine_spec()
    machine_id, real_token = api.enroll(spec)
    forged, intruder = _intrude(api, spec, machine_id)

    # the intruder can do nothing as the machine ...
    refused = api.post_run(intruder, run_report(forged))
    assert refused.status_code == 403 and "pending approval" in refused.json()["detail"]
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(intruder)).status_code == 403
    assert _beat(api, intruder)["status"] == "pending"
    # ... the real agent keeps working, and the machine is as it was
    assert api.post_run(real_token, run_report(spec)).status_code == 201
    assert _beat(api, real_token)["status"] == "online"
    with db.reading() as session:
        machine = session.scalars(select(Machine).where(Machine.id == machine_id)).one()
        assert machine.hostname == spec.hostname and machine.status == "online"
    assert api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()["spec"]["hostname"] == (
        spec.hostname
    )


def test_an_admin_approval_hands_the_machine_to_the_reenrolled_agent(api: Api) -> None:
    """A lost config file is recovered: enrol again, an admin approves, the old token stops working."""
    spec = machine_spec()
    machine_id, old_token = api.enroll(spec)
    new_token = _reenroll(api, spec)["machine_token"]
    tokens = api.client.get("/api/v1/tokens", params={"kind": "machine"}, headers=api.admin).json()
    assert [t["awaiting_approval"] for t in tokens if t["machine_id"] == str(machine_id)].count(True) == 1

    approved = api.client.post(f"/api/v1/machines/{machine_id}/approve", headers=api.admin)
    assert approved.status_code == 200 and approved.json()["status"] == "online"
    assert api.post_run(old_token, run_report(spec)).status_code == 401
    assert api.post_run(new_token, run_report(spec)).status_code == 201


def test_reenrolling_with_the_current_token_replaces_it_at_once(api: Api) -> None:
    spec = machine_spec()
    machine_id, old_token = api.enroll(spec)
    answer = _reenroll(api, spec, machine_token=old_token)
    assert answer["machine_id"] == str(machine_id) and answer["status"] == "online"
    assert api.post_run(old_token, run_report(spec)).status_code == 401
    assert api.post_run(answer["machine_token"], run_report(spec)).status_code == 201


def test_another_machines_token_or_a_pending_one_is_no_proof(api: Api) -> None:
    spec = machine_spec()
    machine_id, real_token = api.enroll(spec)
    _other, other_token = api.enroll()
    assert _reenroll(api, spec, machine_token=other_token)["status"] == "pending"
    awaiting = _reenroll(api, spec)["machine_token"]
    assert _reenroll(api, spec, machine_token=awaiting)["status"] == "pending"
    assert _reenroll(api, spec, machine_token="hwa_machine_000000000000." + "A" * 43)["status"] == "pending"
    assert api.post_run(real_token, run_report(spec)).status_code == 201
    # only the latest request awaits approval: the earlier ones were withdrawn
    tokens = api.client.get("/api/v1/tokens", params={"kind": "machine"}, headers=api.admin).json()
    live = [t for t in tokens if t["machine_id"] == str(machine_id) and t["revoked_at"] is None]
    assert sorted(t["awaiting_approval"] for t in live) == [False, True]


def test_auto_approving_labs_still_ask_before_handing_over_an_enrolled_machine(
    db: Database, settings: Settings
) -> None:
    auto = settings.model_copy(update={"auto_approve_machines": True})
    with TestClient(create_app(auto, database=db)) as client:
        api = Api(client, settings.admin_token or "")
        spec = machine_spec()
        first = _reenroll(api, spec)
        assert first["status"] == "online"
        second = _reenroll(api, spec)
        assert second["machine_id"] == first["machine_id"] and second["status"] == "pending"
        assert api.post_run(first["machine_token"], run_report(spec)).status_code == 201
        assert api.post_run(second["machine_token"], run_report(spec)).status_code == 403


def test_a_retired_machine_is_brought_back_by_an_admin(api: Api) -> None:
    spec = machine_spec()
    machine_id, old_token = api.enroll(spec)
    assert api.post_run(old_token, run_report(spec)).status_code == 201
    assert api.client.post(f"/api/v1/machines/{machine_id}/retire", headers=api.admin).status_code == 200
    body = {"spec": spec.model_dump(mode="json")}
    refused = api.client.post("/api/v1/agents/enroll", json=body, headers=api.bearer(api.token()))
    assert refused.status_code == 409 and "unretire" in refused.json()["detail"]

    back = api.client.post(f"/api/v1/machines/{machine_id}/unretire", headers=api.admin)
    assert back.status_code == 200 and back.json()["status"] == "pending"
    answer = _reenroll(api, spec)
    assert answer["machine_id"] == str(machine_id) and answer["status"] == "pending"
    assert api.client.post(f"/api/v1/machines/{machine_id}/approve", headers=api.admin).json()["status"] == "online"
    assert api.post_run(answer["machine_token"], run_report(spec)).status_code == 201
    assert api.post_run(old_token, run_report(spec)).status_code == 401  # retiring revoked it for good
    results = api.client.get("/api/v1/results", params={"machine_id": str(machine_id)}, headers=api.admin).json()
    assert results["total"] == 6  # the runs from before it was retired were kept


def test_unretiring_an_unknown_machine_is_404(api: Api) -> None:
    assert api.client.post(f"/api/v1/machines/{uuid.uuid4()}/unretire", headers=api.admin).status_code == 404


def test_a_reenrolment_from_a_host_with_the_longest_name_is_held_not_a_server_error(api: Api) -> None:
    """The held token's note names the host; a 200-character hostname must still fit its column
    (PostgreSQL enforces the length; the fuzzer found this as a 500)."""
    spec = machine_spec().model_copy(update={"hostname": "h" * 200})
    api.enroll(spec)
    answer = _reenroll(api, spec, machine_token="hwa_machine_000000000000." + "A" * 43)
    assert answer["status"] == "pending"


def test_a_pending_machine_is_not_taken_over_before_its_approval(api: Api) -> None:
    """An enrolled machine awaiting approval has its first agent's token: another holder of an
    enrollment token, re-enrolling its fingerprint, neither revokes that agent nor becomes the machine
    the admin approves; approving again, as the listing says, hands the machine to the newcomer."""
    spec = machine_spec()
    machine_id, real_token = api.enroll(spec, approve=False)
    forged, intruder = _intrude(api, spec, machine_id)
    assert _beat(api, real_token)["status"] == "pending", "the first agent keeps its token"
    assert api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()["hostname"] == spec.hostname

    assert api.client.post(f"/api/v1/machines/{machine_id}/approve", headers=api.admin).status_code == 200
    assert api.post_run(real_token, run_report(spec)).status_code == 201
    refused = api.post_run(intruder, run_report(forged))
    assert refused.status_code == 403 and "pending approval" in refused.json()["detail"]
    assert api.client.post(f"/api/v1/machines/{machine_id}/approve", headers=api.admin).status_code == 200
    assert api.post_run(intruder, run_report(forged)).status_code == 201
    assert api.post_run(real_token, run_report(spec)).status_code == 401
