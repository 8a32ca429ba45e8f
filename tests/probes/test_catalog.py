from __future__ import annotations

import pytest

from app import catalog
from app.probes.fingerprint import fingerprint
from app.probes.sources import FixtureSources
from testkit import MACHINES
from testkit.factories import h100_spec


@pytest.mark.parametrize(
    ("driver_name", "catalog_id"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"),
        ("NVIDIA H100 PCIe", "h100-pcie-80gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA L40S", "l40s"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ],
)
def test_gpu_driver_names_match_their_part(driver_name: str, catalog_id: str) -> None:
    assert catalog.match_gpu(driver_name)[0] == catalog_id


@pytest.mark.parametrize(
    ("model_name", "catalog_id"),
    [
        ("Intel(R) Xeon(R) Platinum 8480+", "xeon-platinum-8480plus"),
        ("AMD EPYC 9654 96-Core Processor", "epyc-9654"),
        ("Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz", "xeon-platinum-8380"),
    ],
)
def test_cpu_model_names_match_their_part(model_name: str, catalog_id: str) -> None:
    assert catalog.match_cpu(model_name)[0] == catalog_id


@pytest.mark.parametrize("name", ["NVIDIA H100", "NVIDIA H100 80GB", "NVIDIA L40S-PCIe-48GB-custom", "GeForce 4090"])
def test_near_misses_are_not_guessed(name: str) -> None:
    catalog_id, reason = catalog.match_gpu(name)
    assert catalog_id is None and name in reason


@pytest.mark.parametrize("name", ["AMD EPYC", "Intel(R) Xeon(R) Processor", "AMD EPYC 9995 256-Core Processor"])
def test_generic_or_unknown_cpus_are_not_guessed(name: str) -> None:
    assert catalog.match_cpu(name)[0] is None


def test_a_part_the_catalog_carries_is_matched_by_its_lscpu_name() -> None:
    assert catalog.match_cpu("AMD EPYC 9655 96-Core Processor")[0] == "epyc-9655"


def test_every_figure_names_its_source() -> None:
    for entry in catalog.load():
        numbers = {k for k, v in entry.model_dump().items() if isinstance(v, float)}
        assert numbers <= set(entry.sources), f"{entry.id}: {numbers - set(entry.sources)} have no source"


def test_catalog_agrees_with_the_h100_reference() -> None:
    """DESIGN's H100 measurements must sit below the catalog's peaks (bf16 GEMM 702 of 989 TFLOP/s)."""
    h100 = catalog.get("h100-sxm5-80gb")
    assert h100.peak_bf16_tflops and h100.peak_bf16_tflops > 702
    assert h100.peak_tf32_tflops and h100.peak_tf32_tflops > 356
    assert h100.memory_bandwidth_gb_s and h100.memory_bandwidth_gb_s > 3000


def test_fingerprint_changes_with_the_hardware_only() -> None:
    spec = h100_spec()
    sources = FixtureSources(MACHINES / "h100")
    gpus = [d for d in spec.devices if d.kind.value == "cuda"]
    base = fingerprint(sources, spec.cpu, spec.memory, gpus)
    assert base == spec.fingerprint
    busier = spec.memory.model_copy(update={"available_mb": 1.0})
    assert fingerprint(sources, spec.cpu, busier, gpus) == base, "free memory is not hardware"
    more_memory = spec.memory.model_copy(update={"total_mb": spec.memory.total_mb * 2})
    assert fingerprint(sources, spec.cpu, more_memory, gpus) != base
    assert fingerprint(sources, spec.cpu, spec.memory, []) != base
    fewer_cores = spec.cpu.model_copy(update={"physical_cores": 8, "logical_cores": 8})
    assert fingerprint(sources, fewer_cores, spec.memory, gpus) != base
