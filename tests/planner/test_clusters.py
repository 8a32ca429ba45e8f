"""Declared clusters and the lab's own data-parallel runs, through the API a lab and a procurement
tool call: a cluster's network and size shape plans over its machines, and what the lab measured
(scaling efficiency over a part's link, or over a cluster's network) replaces the model's guess."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.contracts import MachineSpec
from testkit.factories import Api, machine_spec, result, run_report
from tests.conftest import ONE_BACKEND

pytestmark = pytest.mark.parametrize("database_url", ONE_BACKEND, indirect=True)

ONE_H100 = 2242.0
"""bf16 ResNet-50 training at batch 256 on one H100, as the lab measured it (DESIGN.md's figure)."""


def trains(**changes: Any) -> Any:
    values: dict[str, Any] = {
        "task": "train",
        "precision": "bf16",
        "batch_size": 256,
        "throughput_samples_per_s": ONE_H100,
        "latency_p50_ms": 114.2,
        "latency_p90_ms": 115.0,
        "latency_p99_ms": 116.0,
        "latency_mean_ms": 114.3,
        "latency_ci95_low_ms": 114.0,
        "latency_ci95_high_ms": 114.5,
        **changes,
    }
    return result(**values)


def parallel(devices: int, efficiency: float, **changes: Any) -> Any:
    throughput = devices * ONE_H100 * efficiency
    return trains(
        devices=devices,
        throughput_samples_per_s=throughput,
        scaling_efficiency=efficiency,
        mean_power_w=None,
        energy_per_sample_j=None,
        power_source="none",
        **changes,
    )


def eight_gpus() -> MachineSpec:
    spec = machine_spec()
    gpu = next(d for d in spec.devices if d.kind.value == "cuda")
    assert gpu.nvidia is not None
    more = [
        gpu.model_copy(
            update={"id": f"cuda:{i}", "nvidia": gpu.nvidia.model_copy(update={"uuid": f"GPU-{uuid.uuid4()}"})}
        )
        for i in range(1, 8)
    ]
    return spec.model_copy(update={"devices": [*spec.devices, *more]})


def declare(api: Api, name: str, machines: list[uuid.UUID], **changes: Any) -> Any:
    body = {"name": name, "machines": [str(m) for m in machines], "network_gb_s": 12.5, **changes}
    return api.client.post("/api/v1/clusters", json=body, headers=api.admin)


def plan(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    response = api.client.post("/api/v1/plans", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_declared_cluster_is_listed_with_its_machines_and_devices(api: Api) -> None:
    a, _ = api.enroll(machine_spec(hostname="node-a"))
    b, _ = api.enroll(eight_gpus().model_copy(update={"hostname": "node-b"}))
    made = declare(api, "rack-b", [a, b], interconnect="100 GbE")
    assert made.status_code == 201, made.text
    found = api.client.get("/api/v1/clusters/rack-b", headers=api.bearer(api.token("readonly"))).json()
    assert sorted((m["hostname"], m["gpus"]) for m in found["machines"]) == [("node-a", 1), ("node-b", 8)]
    assert found["devices"] == 9 and found["devices_per_system"] == 8
    assert found["interconnect"] == "100 GbE" and found["network_gb_s"] == 12.5
    assert "admin" in found["created_by"]
    listed = api.client.get("/api/v1/clusters", headers=api.admin).json()
    assert [c["name"] for c in listed] == ["rack-b"]

    again = declare(api, "rack-b", [a, b])
    assert again.status_code == 409 and "already declared" in again.json()["detail"]
    unknown = declare(api, "rack-c", [a, uuid.uuid4()])
    assert unknown.status_code == 404 and "hwadvisor machines list" in unknown.json()["detail"]
    twice = declare(api, "rack-c", [a, a])
    assert twice.status_code == 422 and "listed twice" in twice.text
    alone = declare(api, "rack-c", [a])
    assert alone.status_code == 422

    assert api.client.delete("/api/v1/clusters/rack-b", headers=api.admin).status_code == 204
    gone = api.client.get("/api/v1/clusters/rack-b", headers=api.admin)
    assert gone.status_code == 404 and "hwadvisor clusters list" in gone.json()["detail"]


def test_a_plan_over_a_declared_cluster_crosses_its_network_and_the_lab_run_over_it_calibrates_it(api: Api) -> None:
    """Two one-GPU machines on 100 GbE (12.5 GB/s): a training plan that needs both crosses that
    network. Once the lab ran the config over the cluster (2 nodes, 60% efficiency), the plan takes
    the measured efficiency and says so; every plan over the network is calibrated by the run."""
    spec = machine_spec(hostname="node-a")
    a, token = api.enroll(spec)
    b, _ = api.enroll(machine_spec(hostname="node-b"))
    assert declare(api, "rack-b", [a, b], interconnect="100 GbE").status_code == 201
    assert api.post_run(token, run_report(spec, results=[trains()])).status_code == 201
    body: dict[str, Any] = {
        "workload": "resnet50",
        "task": "train",
        "scope": "owned",
        "precisions": ["bf16"],
        "batch_size": 256,
        "target": {"throughput_samples_per_s": ONE_H100 * 1.1},
        "cluster": {"declared": "rack-b"},
    }
    before = plan(api, body)
    (first,) = [c for c in before["candidates"] if c["estimate"]["kind"] == "measured"]
    assert first["devices"] == 2 and first["systems"] == 2
    assert "network 12.5 GB/s" in first["link"]
    assert any("declared cluster rack-b: 2 machines, 100 GbE, 12.5 GB/s" in a for a in before["assumptions"])
    assert not any(n["code"].startswith("lab_") for n in first["notes"])

    over = parallel(2, 0.6, nodes=2, cluster="rack-b")
    assert api.post_run(token, run_report(spec, results=[over])).status_code == 201
    after = plan(api, body)
    (first,) = [c for c in after["candidates"] if c["estimate"]["kind"] == "measured"]
    assert first["devices"] == 2
    assert first["scaling_efficiency"] == pytest.approx(0.6)
    codes = {n["code"]: n for n in first["notes"]}
    assert codes["lab_scaling_measured"]["figures"]["efficiency"] == pytest.approx(0.6)
    assert codes["lab_link"]["figures"]["link"] == "cluster rack-b"

    more = plan(api, {**body, "target": {"throughput_samples_per_s": ONE_H100 * 1.3}})
    assert not [c for c in more["candidates"] if c["estimate"]["kind"] == "measured"]  # 2 x 60% < 1.3
    (short,) = [r for r in more["rejected"] if r["hardware"]["machine_name"] in ("node-a", "node-b")][:1]
    assert short["devices"] == 2  # scope owned: the cluster's two devices are all there are

    described = api.client.post(
        "/api/v1/plans",
        json={**body, "cluster": {"declared": "rack-b", "network_gb_s": 50}},
        headers=api.admin,
    )
    assert described.status_code == 422 and "not both" in described.text
    missing = api.client.post("/api/v1/plans", json={**body, "cluster": {"declared": "nope"}}, headers=api.admin)
    assert missing.status_code == 404


def test_a_measured_eight_gpu_run_sets_the_recommenders_eight_device_figure(api: Api) -> None:
    """An 8-GPU machine's data-parallel run (50% of 8 x one GPU, far below what NVLink predicts) is the
    answer for that config, and calibrates the part's NVLink for the other batch sizes."""
    spec = eight_gpus()
    _, token = api.enroll(spec)
    measured = [trains(), trains(batch_size=64, throughput_samples_per_s=2000.0), parallel(8, 0.5)]
    assert api.post_run(token, run_report(spec, results=measured)).status_code == 201
    ask = {"workload": "resnet50", "task": "train", "scope": "owned", "constraints": {"precisions": ["bf16"]}}
    eight = {**ask, "constraints": {"precisions": ["bf16"], "device_count": 8}}
    response = api.client.post("/api/v1/recommendations", json=eight, headers=api.admin)
    assert response.status_code == 200, response.text
    answer = response.json()
    by_batch = {c["batch_size"]: c for c in answer["candidates"] if c["estimate"]["kind"] == "measured"}
    assert by_batch[256]["system_throughput_samples_per_s"] == pytest.approx(8 * ONE_H100 * 0.5)
    assert by_batch[64]["system_throughput_samples_per_s"] < 0.9 * 8 * 2000.0
    assert any("data-parallel run(s) over nvlink h100-sxm5-80gb" in n for n in answer["notes"])

    single = api.client.post("/api/v1/recommendations", json=ask, headers=api.admin).json()
    assert not any("data-parallel run(s)" in n for n in single["notes"])


def test_a_retired_machines_data_parallel_runs_calibrate_nothing(api: Api) -> None:
    """Retiring a machine takes its data-parallel runs out of the lab's link calibration, as it takes
    its one-device results out of the answers: otherwise a broken machine's runs would stay for good."""
    spec = eight_gpus()
    machine, token = api.enroll(spec)
    assert api.post_run(token, run_report(spec, results=[trains(), parallel(8, 0.5)])).status_code == 201
    ask = {
        "workload": "resnet50",
        "task": "train",
        "scope": "catalog",
        "constraints": {"precisions": ["bf16"], "device_count": 8, "runtimes": ["torch-eager"]},
    }
    before = api.client.post("/api/v1/recommendations", json=ask, headers=api.admin).json()
    assert any("data-parallel run(s) over nvlink h100-sxm5-80gb" in n for n in before["notes"])
    assert api.client.post(f"/api/v1/machines/{machine}/retire", headers=api.admin).status_code == 200
    after = api.client.post("/api/v1/recommendations", json=ask, headers=api.admin).json()
    assert not any("data-parallel run(s)" in n for n in after["notes"])
