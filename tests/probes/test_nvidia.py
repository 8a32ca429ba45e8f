"""The GPU probe end to end on NVML as a real H100 answered it, cross-checked with its nvidia-smi -q."""

from __future__ import annotations

import re

from app.probes import probe_machine
from app.probes.sources import FixtureSources
from testkit import MACHINES
from testkit.factories import H100, H100_SM_COUNT, h100_spec
from testkit.nvml import NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_LIBRARY_NOT_FOUND, ReplayNvml


def _smi(field: str) -> str:
    """A value from the captured `nvidia-smi -q`: the first line that starts with the field."""
    text = (H100 / "nvidia-smi-q.txt").read_text()
    match = re.search(rf"^\s*{re.escape(field)}\s*:\s*(.+)$", text, re.MULTILINE)
    assert match, field
    return match.group(1).strip()


def test_h100_is_described_as_nvidia_smi_saw_it() -> None:
    spec = h100_spec()
    gpu = spec.devices[1]
    nv = gpu.nvidia
    assert nv is not None
    assert gpu.id == "cuda:0" and gpu.name == _smi("Product Name") == "NVIDIA H100 80GB HBM3"
    assert nv.uuid == _smi("GPU UUID")
    assert gpu.memory_total_mb == float(_smi("Total").split()[0]) == 81559
    assert nv.power_limit_w == float(_smi("Current Power Limit").split()[0]) == 700
    assert nv.power_default_limit_w == float(_smi("Default Power Limit").split()[0])
    assert (nv.power_limit_min_w, nv.power_limit_max_w) == (
        float(_smi("Min Power Limit").split()[0]),
        float(_smi("Max Power Limit").split()[0]),
    )
    assert nv.max_sm_clock_mhz == 1980 and nv.max_mem_clock_mhz == 2619
    assert (nv.pcie_max_gen, nv.pcie_max_width, nv.pcie_cur_gen, nv.pcie_cur_width) == (5, 16, 5, 16)
    assert nv.driver_version == _smi("Driver Version") and nv.cuda_driver_version == _smi("CUDA Version")
    assert nv.ecc_enabled is True and nv.mig_enabled is False and nv.persistence_mode is True
    assert nv.compute_capability == "9.0" and nv.sm_count == H100_SM_COUNT
    assert nv.mem_bus_width_bits == 5120 and nv.energy_counter is True
    assert spec.power_sensors.nvml_energy_counter is True
    assert gpu.catalog_id == "h100-sxm5-80gb"


def test_every_gpu_of_a_multi_gpu_machine_is_listed_with_its_own_uuid() -> None:
    nvml = ReplayNvml.from_probe_json(H100 / "probe.json", copies=8)
    spec = probe_machine(FixtureSources(H100), nvml=nvml, cuda_sm_counts={})
    gpus = [d for d in spec.devices if d.kind.value == "cuda"]
    assert [d.id for d in gpus] == [f"cuda:{i}" for i in range(8)]
    assert len({d.nvidia.uuid for d in gpus if d.nvidia}) == 8
    assert nvml.initialised == 0, "NVML is shut down after probing"


def test_reading_a_gpu_does_not_support_is_none_not_a_failure() -> None:
    nvml = ReplayNvml.from_probe_json(H100 / "probe.json")
    for unsupported in ("energy_total_mj", "mem_bus_width", "power_limit_range_w", "ecc"):
        del nvml.gpus[0][unsupported]
    spec = probe_machine(FixtureSources(H100), nvml=nvml, cuda_sm_counts={})
    nv = spec.devices[1].nvidia
    assert nv is not None
    assert nv.energy_counter is False and nv.mem_bus_width_bits is None
    assert nv.power_limit_min_w is None and nv.ecc_enabled is None
    assert nv.sm_count is None, "no SM count is made up when torch cannot read it"
    assert spec.power_sensors.nvml_energy_counter is False
    assert not spec.probe_errors


def test_no_nvml_library_or_no_driver_is_recorded_and_the_rest_still_reports() -> None:
    for error, words in ((NVML_ERROR_LIBRARY_NOT_FOUND, "Library Not Found"), (NVML_ERROR_DRIVER_NOT_LOADED, "Driver")):
        spec = probe_machine(FixtureSources(MACHINES / "h100"), nvml=ReplayNvml([], init_error=error))
        assert [d.id for d in spec.devices] == ["cpu"]
        (failure,) = spec.probe_errors
        assert failure.probe == "nvidia" and words in failure.reason
        assert spec.cpu.physical_cores == 16
