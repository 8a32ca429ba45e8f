"""The suites benchmarks/ runs stay valid as the registry changes: each loads, and the GPU ones give
the H200 (replayed from its capture) the configs its reference run measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.bench.suites import load_suite
from app.probes import probe_machine
from app.probes.sources import FixtureSources
from testkit import MACHINES
from testkit.nvml import ReplayNvml

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("*.toml")), ids=lambda p: p.name)
def test_every_benchmark_suite_loads(path: Path) -> None:
    assert load_suite(str(path)).name


@pytest.mark.parametrize(
    ("name", "configs"),
    [
        ("gpu_truth.toml", 213),
        ("gpu_recheck.toml", 29),
        ("gpu_reference.toml", 137),
        ("gpu_batches.toml", 165),
        ("gpu_batches_recheck.toml", 39),
        ("gpu_batch1_recheck.toml", 33),
        ("gpu_second_machine.toml", 198),
    ],
)
def test_the_gpu_suites_give_the_h200_what_its_reference_run_measured(name: str, configs: int) -> None:
    h200 = MACHINES / "h200"
    gpus = json.loads((h200 / "probe.json").read_text())["env"]["nvml_all"]
    spec = probe_machine(FixtureSources(h200), nvml=ReplayNvml(gpus), cuda_sm_counts={})
    found = load_suite(str(BENCHMARKS / name)).configs(spec)
    assert len(found) == configs and all(c.device == "cuda:0" for c in found)
