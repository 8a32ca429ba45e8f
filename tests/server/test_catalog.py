"""The server matches machines against its catalog (with the lab's entries and aliases) and says why."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select

from app.contracts import Heartbeat, MachineSpec
from app.db.engine import Database
from app.db.models import DeviceRow
from testkit.factories import Api, machine_spec

ACME = {"kind": "gpu", "vendor": "ACME", "name": "ACME Tensor 9000", "tdp_w": 300, "aliases": ["ACME T9000 PCIe"]}


def with_gpu_named(name: str, *, agent_match: str | None = None, note: str | None = None) -> MachineSpec:
    """A machine whose cuda:0 reports ``name``, as an agent with the shipped catalog would send it."""
    spec = machine_spec()
    devices = [
        d.model_copy(update={"name": name, "catalog_id": agent_match, "catalog_note": note or "agent's note"})
        if d.id == "cuda:0"
        else d
        for d in spec.devices
    ]
    return spec.model_copy(update={"devices": devices})


def devices(api: Api, machine_id: uuid.UUID) -> dict[str, dict[str, Any]]:
    detail = api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()
    return {d["id"]: d for d in detail["spec"]["devices"]}


def test_a_gpu_the_shipped_catalog_lacks_matches_the_labs_own_entry_at_enrolment(api: Api, db: Database) -> None:
    assert api.client.put("/api/v1/catalog/acme-t9000", json=ACME, headers=api.admin).status_code == 200
    machine_id, _token = api.enroll(with_gpu_named("ACME T9000 PCIe"))
    gpu = devices(api, machine_id)["cuda:0"]
    assert gpu["catalog_id"] == "acme-t9000"
    assert gpu["catalog_note"] == "driver name 'ACME T9000 PCIe' is ACME Tensor 9000"
    detail = api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()
    assert detail["labels"]["gpu"] == "acme-t9000", "the automatic label uses the server's match"
    with db.reading() as session:
        rows = session.scalars(select(DeviceRow).where(DeviceRow.machine_id == machine_id)).all()
    assert {r.device_id: r.catalog_id for r in rows} == {"cpu": None, "cuda:0": "acme-t9000"}, (
        "what the recommender reads"
    )


def test_a_lab_alias_on_a_shipped_entry_matches_the_next_new_spec(api: Api) -> None:
    spec = with_gpu_named("GRID H100-80C")
    machine_id, token = api.enroll(spec)
    before = devices(api, machine_id)["cuda:0"]
    assert before["catalog_id"] is None and "'GRID H100-80C'" in before["catalog_note"]
    alias = api.client.put("/api/v1/catalog/h100-sxm5-80gb", json={"aliases": ["GRID H100-80C"]}, headers=api.admin)
    assert alias.status_code == 200, alias.text
    assert alias.json()["aliases"][-1] == "GRID H100-80C" and "NVIDIA H100 80GB HBM3" in alias.json()["aliases"]
    changed = spec.model_copy(update={"hostname": spec.hostname + "-renamed"})
    beat = Heartbeat(spec=changed).model_dump(mode="json")
    assert api.client.post("/api/v1/agents/heartbeat", json=beat, headers=api.bearer(token)).status_code == 200
    after = devices(api, machine_id)["cuda:0"]
    assert after["catalog_id"] == "h100-sxm5-80gb"
    assert after["catalog_note"] == "driver name 'GRID H100-80C' is NVIDIA H100 SXM5 80GB"


def test_the_agents_match_is_kept_only_if_the_server_finds_one(api: Api) -> None:
    spec = with_gpu_named("Mystery Accelerator", agent_match="h100-sxm5-80gb", note="an older catalog said so")
    machine_id, _token = api.enroll(spec)
    gpu = devices(api, machine_id)["cuda:0"]
    assert gpu["catalog_id"] is None
    assert "no catalog entry has the driver name 'Mystery Accelerator'" in gpu["catalog_note"]
    assert gpu["catalog_note"].endswith("(the agent's catalog said h100-sxm5-80gb)")


def test_a_generic_virtualised_cpu_stays_unmatched_and_cannot_be_an_alias(api: Api) -> None:
    machine_id, _token = api.enroll(machine_spec())
    cpu = devices(api, machine_id)["cpu"]
    assert cpu["name"] == "Intel(R) Xeon(R) Processor"
    assert cpu["catalog_id"] is None and "generic model name" in cpu["catalog_note"]
    assert "hwadvisor machines set-catalog" in cpu["catalog_note"]
    refused = api.client.put(
        "/api/v1/catalog/xeon-platinum-8480plus", json={"aliases": ["Intel(R) Xeon(R) Processor"]}, headers=api.admin
    )
    assert refused.status_code == 422 and "generic CPU name" in refused.json()["detail"]


def test_an_alias_another_entry_has_is_refused_and_nothing_is_kept(api: Api) -> None:
    refused = api.client.put("/api/v1/catalog/acme-t9000", json={**ACME, "aliases": ["NVIDIA L4"]}, headers=api.admin)
    assert refused.status_code == 422
    assert "the alias 'NVIDIA L4' would not match acme-t9000" in refused.json()["detail"]
    assert "ambiguous between acme-t9000, l4" in refused.json()["detail"]
    assert api.client.get("/api/v1/catalog/acme-t9000", headers=api.admin).status_code == 404


def test_aliases_are_bounded_in_count_and_length(api: Api) -> None:
    many = {"aliases": [f"GPU {n}" for n in range(17)]}
    assert api.client.put("/api/v1/catalog/l4", json=many, headers=api.admin).status_code == 422
    long = {"aliases": ["x" * 201]}
    assert api.client.put("/api/v1/catalog/l4", json=long, headers=api.admin).status_code == 422
    assert api.client.put("/api/v1/catalog/l4", json={"aliases": None}, headers=api.admin).status_code == 422
    assert api.client.put("/api/v1/catalog/match", json=ACME, headers=api.admin).status_code == 422


def test_a_vendor_longer_than_its_column_is_a_422_on_every_database(api: Api) -> None:
    """PostgreSQL refused the 100-character vendor SQLite stored: a 500 there."""
    entry = {"kind": "gpu", "vendor": "V" * 65, "name": "Long-vendor GPU"}
    assert api.client.put("/api/v1/catalog/long-vendor", json=entry, headers=api.admin).status_code == 422
    entry["vendor"] = "V" * 64
    assert api.client.put("/api/v1/catalog/long-vendor", json=entry, headers=api.admin).status_code in (200, 201)


def test_match_says_what_a_name_is_and_why_to_a_read_only_key(api: Api) -> None:
    reader = api.bearer(api.token("readonly"))

    def match(name: str, **params: str) -> dict[str, Any]:
        response = api.client.get("/api/v1/catalog/match", params={"name": name, **params}, headers=reader)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    assert match("NVIDIA H100 80GB HBM3") == {
        "name": "NVIDIA H100 80GB HBM3",
        "kind": "gpu",
        "catalog_id": "h100-sxm5-80gb",
        "code": "alias",
        "note": "driver name 'NVIDIA H100 80GB HBM3' is NVIDIA H100 SXM5 80GB",
    }
    assert match("AMD EPYC 9654 96-Core Processor") | {"note": ""} == {
        "name": "AMD EPYC 9654 96-Core Processor",
        "kind": "cpu",
        "catalog_id": "epyc-9654",
        "code": "pattern",
        "note": "",
    }
    near = match("NVIDIA H100")
    assert near["catalog_id"] is None and near["code"] == "unknown" and "'NVIDIA H100'" in near["note"]
    generic = match("AMD EPYC")
    assert generic["catalog_id"] is None and generic["code"] == "generic"
    assert "generic model name 'AMD EPYC'" in generic["note"], "why it does not match"
    assert "hwadvisor machines set-catalog MACHINE_ID CATALOG_ID" in generic["note"], "and what to do"
    assert match("ACME T9000 PCIe")["catalog_id"] is None
    assert api.client.put("/api/v1/catalog/acme-t9000", json=ACME, headers=api.admin).status_code == 200
    assert match("ACME T9000 PCIe")["catalog_id"] == "acme-t9000"
    assert match("ACME T9000 PCIe", kind="cpu")["catalog_id"] is None, "a GPU alias does not name a CPU"
    assert api.client.delete("/api/v1/catalog/acme-t9000/overrides", headers=api.admin).status_code == 204
    assert match("ACME T9000 PCIe")["code"] == "unknown"
    missing = api.client.get("/api/v1/catalog/match", headers=reader)
    assert missing.status_code == 422


def test_match_is_documented_in_openapi(api: Api) -> None:
    operation = api.client.get("/openapi.json").json()["paths"]["/api/v1/catalog/match"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CatalogMatch"
    }
    assert {p["name"] for p in operation["parameters"]} == {"name", "kind"}


def listing(api: Api, **params: Any) -> dict[str, Any]:
    response = api.client.get("/api/v1/catalog", params=params, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def every_entry(api: Api, **params: Any) -> dict[str, Any]:
    """The whole (filtered) listing, read a page of the most the API gives (500) at a time."""
    first = listing(api, limit=500, **params)
    items = list(first["items"])
    while len(items) < first["total"]:
        items += listing(api, limit=500, offset=len(items), **params)["items"]
    return {**first, "items": items}


def test_the_listing_pages_through_every_entry_once_with_the_total(api: Api) -> None:
    everything = every_entry(api)
    entries = everything["items"]
    assert everything["total"] == len(entries) > 7 and everything["offset"] == 0
    paged: list[str] = []
    while len(paged) < everything["total"]:
        page = listing(api, limit=7, offset=len(paged))
        assert page["total"] == everything["total"] and 0 < len(page["items"]) <= 7
        paged += [e["id"] for e in page["items"]]
    assert paged == [e["id"] for e in entries]
    assert listing(api, offset=everything["total"])["items"] == []
    assert [e["kind"] for e in entries] == sorted((e["kind"] for e in entries), key=["gpu", "cpu"].index)


def test_the_listing_filters_by_vendor_kind_year_memory_and_text(api: Api) -> None:
    everything = every_entry(api)["items"]

    def ids(**params: Any) -> list[str]:
        page = every_entry(api, **params)
        assert page["total"] == len(page["items"])
        return [e["id"] for e in page["items"]]

    assert ids(kind="cpu") == [e["id"] for e in everything if e["kind"] == "cpu"] != []
    assert ids(vendor="nvidia") == [e["id"] for e in everything if e["vendor"] == "NVIDIA"] != []
    assert ids(year=2022) == [e["id"] for e in everything if e["release_year"] == 2022] != []
    recent = [e["id"] for e in everything if (e["release_year"] or 0) >= 2023 and e["kind"] == "gpu"]
    assert ids(min_year=2023, kind="gpu") == recent != []
    assert ids(max_year=2019) == [e["id"] for e in everything if e["release_year"] and e["release_year"] <= 2019]
    assert ids(min_memory_gb=100) == [e["id"] for e in everything if (e["memory_gb"] or 0) >= 100] != []
    found = ids(q="h100 SXM")
    assert "h100-sxm5-80gb" in found and all("h100" in i for i in found)
    assert ids(q="no such part") == []


def test_the_labs_own_entry_is_listed_with_its_vendor_and_price(api: Api) -> None:
    own = api.client.put("/api/v1/catalog/acme-t9000", json={**ACME, "price_usd": 1200}, headers=api.admin)
    assert own.status_code == 200, own.text
    page = listing(api, vendor="acme")
    assert [e["id"] for e in page["items"]] == ["acme-t9000"] and "ACME" in page["vendors"]
    price = page["items"][0]["price"]
    assert price["usd"] == 1200 and price["basis"] == "lab" and price["date"] == page["items"][0]["price_date"]


def test_a_price_the_lab_sets_is_dated_and_labelled_everywhere(api: Api) -> None:
    set_today = api.client.put("/api/v1/catalog/l4", json={"price_usd": 2500}, headers=api.admin)
    assert set_today.status_code == 200, set_today.text
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert set_today.json()["price_date"] == today
    assert set_today.json()["price"] == {
        "usd": 2500,
        "basis": "lab",
        "date": today,
        "source": set_today.json()["sources"]["price_usd"],
        "label": f"lab's price, {today}",
    }
    quoted = api.client.put("/api/v1/catalog/l4", json={"price_usd": 2400, "price_date": "2025-02"}, headers=api.admin)
    assert quoted.json()["price"]["date"] == "2025-02"
    shown = api.client.get("/api/v1/catalog/l4", headers=api.admin).json()
    assert (
        shown["price"]
        == quoted.json()["price"]
        == listing(api, q="l4", kind="gpu", vendor="NVIDIA")["items"][0]["price"]
    )
    bad = api.client.put("/api/v1/catalog/l4", json={"price_usd": 1, "price_date": "Feb 2025"}, headers=api.admin)
    assert bad.status_code == 422


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 501},
        {"limit": 0},
        {"offset": -1},
        {"kind": "tpu"},
        {"year": 1800},
        {"min_memory_gb": -1},
        {"q": "x" * 201},
        {"year": 2023, "min_year": 2020},
        {"min_year": 2024, "max_year": 2020},
    ],
)
def test_bad_listing_parameters_are_refused_with_422(api: Api, params: dict[str, Any]) -> None:
    response = api.client.get("/api/v1/catalog", params=params, headers=api.admin)
    assert response.status_code == 422, response.text


def test_the_listing_is_documented_in_openapi(api: Api) -> None:
    schema = api.client.get("/openapi.json").json()
    operation = schema["paths"]["/api/v1/catalog"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CatalogPage"
    }
    assert {p["name"] for p in operation["parameters"]} == {
        "vendor", "kind", "year", "min_year", "max_year", "min_memory_gb", "q", "limit", "offset"
    }  # fmt: skip
    assert all(p.get("description") for p in operation["parameters"] if p["name"] not in ("limit", "offset"))
    entry = schema["components"]["schemas"]["CatalogRead"]["properties"]
    assert {"price", "price_date", "release_year", "price_usd", "release_price_usd"} <= set(entry)


def test_power_limits_must_stay_a_range_and_a_refused_change_keeps_nothing(api: Api) -> None:
    l4 = api.client.get("/api/v1/catalog/l4", headers=api.admin).json()
    inverted = {"power_limit_min_w": 900, "power_limit_max_w": 100}
    refused = api.client.put("/api/v1/catalog/l4", json=inverted, headers=api.admin)
    assert refused.status_code == 422 and "power_limit_min_w (900 W) would be above" in refused.json()["detail"]
    above_the_shipped_max = api.client.put("/api/v1/catalog/l4", json={"power_limit_min_w": 1000}, headers=api.admin)
    assert above_the_shipped_max.status_code == 422
    assert api.client.get("/api/v1/catalog/l4", headers=api.admin).json() == l4
    both = {"power_limit_min_w": 40, "power_limit_max_w": 60}
    assert api.client.put("/api/v1/catalog/l4", json=both, headers=api.admin).status_code == 200
