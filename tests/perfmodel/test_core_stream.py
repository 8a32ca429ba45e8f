"""One core's stream (app/perfmodel/core_stream.py): what a CPU's few threads stream at most, measured on
the kept runs, and the shipped figures are what those runs say."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.catalog import load
from app.contracts import Precision
from app.perfmodel import core_stream
from app.perfmodel.device import Device, device
from app.perfmodel.model import scaled
from benchmarks.core_stream import CALIBRATION_VM, measured, per_vm_median, vm_of


def _cpu(core_bandwidth: float = math.inf) -> Device:
    # a 64-core part with 300 GB/s: the share rule gives one core 4 x 300 / 64 = 18.75 GB/s
    return Device(
        "toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None, core_bandwidth=core_bandwidth
    )


def test_the_shipped_core_streams_are_the_kept_runs_medians() -> None:
    stale = "app/perfmodel/data/core_stream.json is stale: run `.venv/bin/python -m benchmarks.core_stream --write`"
    assert measured() == core_stream.shipped(), stale


def test_a_core_streams_no_faster_than_its_architecture_measured() -> None:
    unbounded, bounded = _cpu(), _cpu(12e9)
    assert scaled(unbounded, 1)[2] == pytest.approx(18.75e9)  # the share rule alone
    assert scaled(bounded, 1)[2] == pytest.approx(12e9)
    assert scaled(bounded, 2)[2] == pytest.approx(24e9)
    assert scaled(bounded, 16)[2] == pytest.approx(16 * 12e9)
    assert scaled(bounded, 32)[2] == scaled(unbounded, 32)[2] == pytest.approx(3e11)  # the channels bound it
    assert scaled(bounded, 64)[2] == 3e11  # every core: the part's bandwidth, its cores streaming more
    few = _cpu(2e9)  # 64 cores streaming 2 GB/s each cannot draw 300 GB/s, however many channels
    assert scaled(few, 64)[2] == scaled(few, None)[2] == pytest.approx(128e9)
    assert scaled(few, 63)[2] == pytest.approx(126e9)
    assert scaled(bounded, 2)[:2] == scaled(unbounded, 2)[:2]  # compute is not touched


@given(st.integers(1, 64), st.floats(1e9, 1e11))
def test_more_threads_never_stream_less_and_never_above_their_cores_or_the_part(threads: int, per_core: float) -> None:
    cpu = _cpu(per_core)
    bandwidth = scaled(cpu, threads)[2]
    assert bandwidth <= min(cpu.bandwidth, threads * per_core) * (1 + 1e-12)
    if threads > 1:
        assert bandwidth >= scaled(cpu, threads - 1)[2]


def test_catalog_parts_carry_their_architectures_core_stream_and_unmeasured_ones_none() -> None:
    catalog = load()
    zen4 = next(h for h in catalog if h.kind == "cpu" and h.architecture == "Zen 4")
    cascade = next(h for h in catalog if h.kind == "cpu" and h.architecture == "Cascade Lake")
    gpu = next(h for h in catalog if h.kind == "gpu" and h.peak_fp32_tflops and h.memory_bandwidth_gb_s)
    found = device(zen4, Precision.fp32)
    assert found is not None and found.core_bandwidth == pytest.approx(core_stream.shipped().gb_s["Zen 4"] * 1e9)
    assert (d := device(cascade, Precision.fp32)) is not None and d.core_bandwidth == math.inf
    assert (g := device(gpu, Precision.fp32)) is not None and g.core_bandwidth == math.inf


def test_a_vm_weighs_once_however_many_runs_it_kept() -> None:
    # two kept runs of one Zen 3 VM, three of another: the per-run median would be the second VM's alone
    runs = [
        ("zen3-2026-11-30-llm_cpu.json", 20.0),
        ("zen3-2026-11-30-llm_cpu_threads.json", 20.0),
        ("zen3-2026-12-02-llm_cpu.json", 10.0),
        ("zen3-2026-12-02-llm_cpu_threads.json", 10.0),
        ("zen3-2026-12-02-llm_prefill_threads.json", 10.0),
    ]
    assert per_vm_median(runs) == 15.0
    assert vm_of("llm_cpu_run_1.json") == vm_of("llm_threads_run.json") == CALIBRATION_VM
