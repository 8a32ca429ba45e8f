"""A real H200 machine, captured by scripts/capture_machine.py on the machine itself (benchmarks/gpu_truth.sh):
the replayed probe answers what the live probe answered there, and what nvidia-smi -q printed."""

from __future__ import annotations

import json
import re

from app.contracts import MachineSpec
from app.probes import probe_machine
from app.probes.sources import FixtureSources
from testkit import MACHINES
from testkit.nvml import ReplayNvml

H200 = MACHINES / "h200"


def _replayed() -> MachineSpec:
    gpus = json.loads((H200 / "probe.json").read_text())["env"]["nvml_all"]
    return probe_machine(FixtureSources(H200), nvml=ReplayNvml(gpus), cuda_sm_counts={gpus[0]["uuid"]: 132})


def _smi(field: str) -> str:
    match = re.search(rf"^\s*{re.escape(field)}\s*:\s*(.+)$", (H200 / "nvidia-smi-q.txt").read_text(), re.MULTILINE)
    assert match, field
    return match.group(1).strip()


def test_the_replay_answers_what_the_live_probe_answered_on_the_machine() -> None:
    live = MachineSpec.model_validate_json((H200 / "spec.json").read_text())
    replayed = _replayed()
    assert replayed.fingerprint == live.fingerprint
    assert (replayed.cpu, replayed.memory, replayed.software) == (live.cpu, live.memory, live.software)
    assert replayed.power_sensors == live.power_sensors
    assert [d.model_dump(exclude={"nvidia"}) for d in replayed.devices] == [
        d.model_dump(exclude={"nvidia"}) for d in live.devices
    ]
    assert replayed.devices[1].nvidia == live.devices[1].nvidia
    assert not replayed.probe_errors


def test_the_h200_is_described_as_nvidia_smi_saw_it_and_matched_to_its_catalog_entry() -> None:
    gpu = _replayed().devices[1]
    nv = gpu.nvidia
    assert nv is not None
    assert gpu.name == _smi("Product Name") == "NVIDIA H200"
    assert nv.uuid == _smi("GPU UUID") and gpu.memory_total_mb == float(_smi("Total").split()[0]) == 143771
    assert nv.power_limit_w == float(_smi("Current Power Limit").split()[0]) == 700
    assert (nv.power_limit_min_w, nv.power_limit_max_w) == (200, 700)
    assert nv.driver_version == _smi("Driver Version") and nv.cuda_driver_version == _smi("CUDA Version")
    assert nv.max_sm_clock_mhz == 1980 and nv.max_mem_clock_mhz == 3201 and nv.sm_count == 132
    assert nv.energy_counter and nv.ecc_enabled and not nv.mig_enabled
    assert gpu.catalog_id == "h200-sxm-141gb"


def test_the_cpu_of_a_gpu_vm_is_the_hypervisor_s_generic_xeon() -> None:
    spec = _replayed()
    assert spec.cpu.logical_cores == 16 and "Xeon" in spec.devices[0].name
