"""The real probe on the machine the tests run on, checked against what the OS says independently."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from app.contracts import MachineSpec
from app.probes import probe_machine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def spec() -> MachineSpec:
    return probe_machine()


def test_host_counts_match_the_os(spec: MachineSpec) -> None:
    assert spec.cpu.logical_cores == os.cpu_count()
    assert spec.cpu.effective_cpus <= spec.cpu.logical_cores
    assert spec.cpu.effective_cpus <= len(os.sched_getaffinity(0))
    assert abs(spec.memory.total_mb - psutil.virtual_memory().total / 2**20) < 1
    assert spec.devices[0].id == "cpu"
    assert spec.software.python == ".".join(map(str, sys.version_info[:3]))


def test_host_without_gpu_says_why(spec: MachineSpec) -> None:
    if any(d.kind.value == "cuda" for d in spec.devices):
        pytest.skip("this machine has an NVIDIA GPU")
    assert any(e.probe == "nvidia" for e in spec.probe_errors)


def test_this_ci_machine_is_a_two_core_amd_epyc_under_kvm(spec: MachineSpec) -> None:
    """What is known to be true of the project's own machines (2 AMD EPYC cores, KVM, no GPU)."""
    if spec.cpu.vendor != "AuthenticAMD" or spec.cpu.logical_cores != 2:
        pytest.skip(f"not the project's 2-core EPYC machine ({spec.cpu.model_name}, {spec.cpu.logical_cores} CPUs)")
    assert spec.cpu.model_name.startswith("AMD EPYC")
    assert spec.cpu.hypervisor == "KVM"
    assert spec.cpu.effective_cpus == 2
    assert {"avx2", "fma"} <= set(spec.cpu.isa_features) and "amx_tile" not in spec.cpu.isa_features
    assert spec.devices[0].catalog_id is None and "generic model name" in (spec.devices[0].catalog_note or "")
    assert spec.software.libraries["torch"].startswith("2.")
    assert "CPUExecutionProvider" in spec.software.libraries["onnxruntime.providers"].split(",")


def test_fingerprint_is_stable_between_probes(spec: MachineSpec) -> None:
    assert probe_machine().fingerprint == spec.fingerprint


def test_probe_command_prints_a_table_and_valid_json() -> None:
    table = subprocess.run(
        [sys.executable, "-m", "app", "probe"], capture_output=True, text=True, check=True, cwd=ROOT, timeout=120
    ).stdout
    assert "effective cpus" in table and "devices" in table
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "probe",
            "--json",
            "--replay",
            str(ROOT / "tests/fixtures/machines/xeon-8480-2s"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    ).stdout
    replayed = MachineSpec.model_validate(json.loads(out))
    assert replayed.cpu.sockets == 2
    assert replayed.devices[0].catalog_id == "xeon-platinum-8480plus"
    assert replayed.power_sensors.rapl_readable and set(replayed.power_sensors.rapl_domains) == {
        "package-0",
        "package-1",
        "package-0/dram",
    }
