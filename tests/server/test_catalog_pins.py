"""An admin pins a device the server cannot match (a hypervisor's generic CPU name) to a catalog
entry: recorded with who and when, shown in the machine's detail, kept when the machine reports its
spec again, used by the recommender, and clearable."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app.contracts import Heartbeat, MachineSpec
from app.db.engine import Database
from app.db.models import DeviceRow
from testkit.factories import Api, machine_spec, run_report
from testkit.lab import cpu_machine, measured

XEON = "xeon-platinum-8480plus"


def detail(api: Api, machine_id: uuid.UUID) -> dict[str, Any]:
    response = api.client.get(f"/api/v1/machines/{machine_id}", headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def device(body: dict[str, Any], device_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(d for d in body["spec"]["devices"] if d["id"] == device_id)
    return found


def stored(db: Database, machine_id: uuid.UUID) -> dict[str, str | None]:
    """What the recommender reads: the device rows' catalog ids."""
    with db.reading() as session:
        rows = session.scalars(select(DeviceRow).where(DeviceRow.machine_id == machine_id)).all()
        return {r.device_id: r.catalog_id for r in rows}


def pin(api: Api, machine_id: uuid.UUID, **body: Any) -> Any:
    return api.client.put(f"/api/v1/machines/{machine_id}/catalog", json=body, headers=api.admin)


def beat(api: Api, token: str, spec: MachineSpec) -> None:
    response = api.client.post(
        "/api/v1/agents/heartbeat", json=Heartbeat(spec=spec).model_dump(mode="json"), headers=api.bearer(token)
    )
    assert response.status_code == 200, response.text


def test_a_generic_cpu_pinned_by_an_admin_keeps_its_entry_until_cleared(api: Api, db: Database) -> None:
    spec = machine_spec()
    machine_id, token = api.enroll(spec)
    cpu = device(detail(api, machine_id), "cpu")
    assert cpu["catalog_id"] is None and "generic model name 'Intel(R) Xeon(R) Processor'" in cpu["catalog_note"]

    pinned = pin(api, machine_id, catalog_id=XEON, device="cpu")
    assert pinned.status_code == 200, pinned.text
    (held,) = pinned.json()["catalog_pins"]
    assert held["device"] == "cpu" and held["catalog_id"] == XEON
    assert held["pinned_by"] == "the server's admin token (HWADVISOR_ADMIN_TOKEN)" and held["pinned_at"]
    shown = device(detail(api, machine_id), "cpu")
    assert shown["catalog_id"] == XEON
    assert shown["catalog_note"].startswith(f"pinned to {XEON} by an admin (the server's admin token")
    assert "automatically: the CPU reports a generic model name" in shown["catalog_note"]
    assert "set-catalog" not in shown["catalog_note"], "no advice to do what is done"
    assert stored(db, machine_id) == {"cpu": XEON, "cuda:0": "h100-sxm5-80gb"}

    beat(api, token, spec.model_copy(update={"hostname": spec.hostname + "-renamed"}))  # a new spec: matched again
    assert stored(db, machine_id)["cpu"] == XEON, "a later automatic match does not overwrite the admin's"
    assert device(detail(api, machine_id), "cpu")["catalog_id"] == XEON
    assert [p["catalog_id"] for p in detail(api, machine_id)["catalog_pins"]] == [XEON]

    cleared = api.client.delete(f"/api/v1/machines/{machine_id}/catalog", params={"device": "cpu"}, headers=api.admin)
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["catalog_pins"] == []
    assert device(cleared.json(), "cpu")["catalog_id"] is None
    assert "generic model name" in device(cleared.json(), "cpu")["catalog_note"]
    assert stored(db, machine_id) == {"cpu": None, "cuda:0": "h100-sxm5-80gb"}
    again = api.client.delete(f"/api/v1/machines/{machine_id}/catalog", headers=api.admin)
    assert again.status_code == 404 and "is pinned" in again.json()["detail"]


def test_without_a_device_the_entrys_kind_picks_it(api: Api, db: Database) -> None:
    machine_id, _token = api.enroll(machine_spec())
    assert pin(api, machine_id, catalog_id="h100-pcie-80gb").status_code == 200
    assert pin(api, machine_id, catalog_id=XEON).status_code == 200
    assert stored(db, machine_id) == {"cpu": XEON, "cuda:0": "h100-pcie-80gb"}
    every = api.client.delete(f"/api/v1/machines/{machine_id}/catalog", headers=api.admin)
    assert every.status_code == 200 and every.json()["catalog_pins"] == []
    assert stored(db, machine_id) == {"cpu": None, "cuda:0": "h100-sxm5-80gb"}, "the automatic matches again"


def test_a_pin_to_nothing_or_to_the_wrong_kind_is_refused_and_changes_nothing(api: Api, db: Database) -> None:
    machine_id, _token = api.enroll(machine_spec())
    unknown = pin(api, machine_id, catalog_id="epyc-9999", device="cpu")
    assert unknown.status_code == 404
    assert "no catalog entry 'epyc-9999'" in unknown.json()["detail"] and "catalog list" in unknown.json()["detail"]
    wrong = pin(api, machine_id, catalog_id="l4", device="cpu")
    assert wrong.status_code == 422 and "l4 is a GPU, and cpu" in wrong.json()["detail"]
    missing = pin(api, machine_id, catalog_id="l4", device="cuda:3")
    assert missing.status_code == 404 and "its devices: cpu (Intel(R) Xeon(R) Processor)" in missing.json()["detail"]
    assert pin(api, machine_id, catalog_id="l4", device="gpu0").status_code == 422
    assert pin(api, uuid.uuid4(), catalog_id=XEON).status_code == 404
    reader = api.client.put(
        f"/api/v1/machines/{machine_id}/catalog", json={"catalog_id": XEON}, headers=api.bearer(api.token("readonly"))
    )
    assert reader.status_code == 403
    assert stored(db, machine_id) == {"cpu": None, "cuda:0": "h100-sxm5-80gb"}
    assert detail(api, machine_id)["catalog_pins"] == []


def test_the_recommender_sees_the_pinned_part(api: Api) -> None:
    spec = cpu_machine("node-cpu")
    machine_id, token = api.enroll(spec)
    results = [measured(8, 70, 120, device="cpu", runtime="onnxruntime-cpu", precision="fp32", threads=4)]
    assert api.post_run(token, run_report(spec, results=results)).status_code == 201
    body = {"workload": "resnet50", "scope": "owned", "batch_size": 8, "constraints": {"runtimes": ["onnxruntime-cpu"]}}

    def hardware() -> dict[str, Any]:
        answer = api.client.post("/api/v1/recommendations", json=body, headers=api.admin).json()
        candidate: dict[str, Any] = answer["candidates"][0]
        assert candidate["hardware"]["machine_id"] == str(machine_id)
        return candidate

    before = hardware()
    assert before["hardware"]["catalog_id"] is None
    assert before["notes"][0]["text"].startswith("no price for Intel(R) Xeon(R) Processor (it matches no catalog")
    assert pin(api, machine_id, catalog_id=XEON).status_code == 200
    after = hardware()
    assert after["hardware"]["catalog_id"] == XEON and after["hardware"]["name"] == "Intel Xeon Platinum 8480+"
