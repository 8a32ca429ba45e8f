"""A small hand-made lab: a few machines whose measurements make the right ranking obvious."""

from __future__ import annotations

import uuid
from typing import Any

from app.contracts import Device, MachineSpec
from testkit.factories import Api, h100_spec, machine_spec, result, run_report

GPU_NAMES = {
    "h100-sxm5-80gb": "NVIDIA H100 80GB HBM3",
    "a100-sxm4-80gb": "NVIDIA A100-SXM4-80GB",
    "l4": "NVIDIA L4",
}


def gpu_machine(catalog_id: str, hostname: str) -> MachineSpec:
    """The replayed H100 machine with its GPU swapped for another catalog part."""
    base = h100_spec()
    devices: list[Device] = []
    for device in base.devices:
        if device.id == "cuda:0":
            device = device.model_copy(update={"name": GPU_NAMES[catalog_id], "catalog_id": catalog_id})
        devices.append(device)
    return machine_spec(hostname=hostname, devices=devices)


def cpu_machine(hostname: str) -> MachineSpec:
    """The replayed H100 machine without its GPU: a CPU-only box (generic CPU name, as under KVM)."""
    return machine_spec(hostname=hostname, devices=[d for d in h100_spec().devices if d.id == "cpu"])


def measured(batch: int, throughput: float, power: float, **changes: Any) -> Any:
    latency = batch / throughput * 1000
    return result(
        batch_size=batch,
        throughput_samples_per_s=throughput,
        latency_p50_ms=latency,
        latency_p90_ms=latency * 1.02,
        latency_p99_ms=latency * 1.05,
        latency_mean_ms=latency,
        latency_ci95_low_ms=latency * 0.99,
        latency_ci95_high_ms=latency * 1.01,
        mean_power_w=power,
        energy_per_sample_j=power / throughput,
        **changes,
    )


# hostname -> part -> results (resnet50/infer, torch-eager, bf16 unless said)
LAB = {
    "node-h100": (
        "h100-sxm5-80gb",
        [
            measured(1, 500, 300),
            measured(8, 3000, 450),
            measured(64, 8000, 610),
            measured(64, 3000, 650, precision="fp32"),
        ],
    ),
    "node-a100": ("a100-sxm4-80gb", [measured(1, 400, 150), measured(8, 2000, 250), measured(64, 4500, 390)]),
    "node-a100-slow": ("a100-sxm4-80gb", [measured(64, 4000, 395)]),
    "node-l4": ("l4", [measured(64, 900, 72)]),
}


def build(api: Api) -> dict[str, uuid.UUID]:
    """Enrol the machines and upload their runs through the API, as agents would."""
    ids = {}
    for hostname, (part, results) in LAB.items():
        spec = gpu_machine(part, hostname)
        machine_id, token = api.enroll(spec)
        response = api.post_run(token, run_report(spec, results=results))
        assert response.status_code == 201, response.text
        ids[hostname] = machine_id
    return ids


def cpu_run(api: Api) -> None:
    """A CPU measured at two thread counts (its part is not in the catalog: generic name under KVM)."""
    spec = cpu_machine("node-cpu")
    _machine_id, token = api.enroll(spec)
    results = [
        measured(8, 20, 90, device="cpu", runtime="onnxruntime-cpu", precision="fp32", threads=t, power_source="rapl")
        for t in (1,)
    ] + [
        measured(8, 70, 120, device="cpu", runtime="onnxruntime-cpu", precision="fp32", threads=4, power_source="rapl")
    ]
    assert api.post_run(token, run_report(spec, results=results)).status_code == 201
