"""A lab CPU is modelled with the peaks its own probe allows (app/catalog/probed.py): a VM pinned to an
Emerald Rapids part that hides the host's AMX is not modelled at AMX's bf16 rate, and says why."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.contracts import MachineSpec
from testkit.factories import Api, run_report
from testkit.lab import cpu_machine, measured
from tests.catalog.test_probed import EMERALD, NO_AMX, SAPPHIRE_VM
from tests.server.test_catalog_pins import beat, pin


def with_features(spec: MachineSpec, features: list[str]) -> MachineSpec:
    return spec.model_copy(update={"cpu": spec.cpu.model_copy(update={"isa_features": features})})


def enrolled(api: Api, hostname: str, features: list[str]) -> tuple[uuid.UUID, str, MachineSpec]:
    spec = with_features(cpu_machine(hostname), features)
    machine_id, token = api.enroll(spec)
    assert pin(api, machine_id, catalog_id=EMERALD, device="cpu").status_code == 200
    return machine_id, token, spec


def figure(api: Api, hardware: dict[str, str], precision: str, **config: Any) -> dict[str, Any]:
    """POST /predictions for ResNet-50 inference in eager PyTorch on ``hardware`` (a lab device, or a
    catalog part)."""
    body = {"workload": "resnet50", "task": "infer", "runtime": "torch-eager", "precision": precision, **hardware}
    response = api.client.post(
        "/api/v1/predictions", json={"batch_size": 8, **body, **config}, headers=api.bearer(api.token("readonly"))
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def predicted(api: Api, machine_id: uuid.UUID, precision: str) -> dict[str, Any]:
    return figure(api, {"machine_id": str(machine_id), "device": "cpu"}, precision, batch_size=32, threads=16)


def test_a_vm_hiding_amx_is_modelled_without_it_until_its_probe_finds_it(api: Api) -> None:
    amx, _, _ = enrolled(api, "node-amx", SAPPHIRE_VM)
    hidden, token, spec = enrolled(api, "node-no-amx", NO_AMX)
    with_amx, without = predicted(api, amx, "bf16"), predicted(api, hidden, "bf16")
    assert without["kind"] == with_amx["kind"] == "predicted"
    # AVX512_BF16 at twice the FP32 FMAs, not AMX at sixteen times; eager PyTorch reaches far less of AMX's
    # rate (the eager tile factors), so the two are closer than their peaks: the VMs measured 0.84x and 1.0x
    # their fp32 at batch 1
    assert without["throughput_samples_per_s"] < 0.95 * with_amx["throughput_samples_per_s"]
    said = "as this device's probe bounds them (bf16_tflops: no amx_bf16; avx512_bf16: 2x fp32): "
    assert said in without["explanation"] and "probe" not in with_amx["explanation"]
    # fp32 is the part's on both: nothing bounds it
    assert predicted(api, hidden, "fp32")["throughput_samples_per_s"] == pytest.approx(
        predicted(api, amx, "fp32")["throughput_samples_per_s"]
    )
    # the agent's next spec finds AMX (the VM moved to a host that passes it through): modelled with it
    beat(api, token, with_features(spec, SAPPHIRE_VM))
    assert predicted(api, hidden, "bf16")["throughput_samples_per_s"] == pytest.approx(
        with_amx["throughput_samples_per_s"]
    )


def test_bf16_measured_without_amx_calibrates_vector_parts_and_never_amx_ones(api: Api) -> None:
    """The VM without AMX measured eager bf16 below its fp32, as session 41's did: its ratio calibrates
    a part whose bf16 runs on the vector units too (Cooper Lake's AVX512_BF16), never an AMX part's."""
    _, token, spec = enrolled(api, "node-no-amx", NO_AMX)
    ran = [
        measured(8, throughput, 100, device="cpu", runtime="torch-eager", precision=precision, threads=16)
        for precision, throughput in (("bf16", 12.0), ("fp32", 15.0))
    ]
    assert api.post_run(token, run_report(spec, results=ran)).status_code == 201
    amx = figure(api, {"catalog_id": EMERALD}, "bf16")  # the part as sold: AMX bf16
    vector = figure(api, {"catalog_id": "xeon-gold-6330h"}, "bf16")  # Cooper Lake: AVX512_BF16, no AMX
    assert vector["references"] and all("node-no-amx" in r for r in vector["references"])
    assert not amx["references"] and "lab device" not in amx["explanation"]
