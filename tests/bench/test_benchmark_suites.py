"""The suites benchmarks/ runs stay valid as the registry changes: each loads, and the GPU ones give
the H200 (replayed from its capture) the configs its reference run measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.bench.config import stored_label
from app.bench.runner import _failed
from app.bench.suites import load_suite
from app.contracts import ResultStatus
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


@pytest.mark.parametrize("name", ["gpu_truth.toml", "data_parallel.toml", "llm_cpu.toml", "runtimes_variants.toml"])
def test_a_stored_result_names_the_config_it_measured_so_a_resumed_job_can_pass_it_over(name: str) -> None:
    """A resumed job is told the labels of the configs its earlier attempts stored (app/db/jobs.py
    ``claimed``): each config's result, as the database holds its columns, gives back the config's label."""
    h200 = MACHINES / "h200"
    gpus = json.loads((h200 / "probe.json").read_text())["env"]["nvml_all"]
    spec = probe_machine(FixtureSources(h200), nvml=ReplayNvml(gpus), cuda_sm_counts={})
    configs = load_suite(str(BENCHMARKS / name)).configs(spec)
    assert configs
    for config in configs:
        r = _failed(config, ResultStatus.unsupported, "not measured here")
        stored = stored_label(
            r.workload,
            r.task.value if r.task else None,
            r.runtime,
            r.device,
            r.precision.value,
            r.batch_size,
            threads=r.threads,
            devices=r.devices,
            context=r.context_tokens,
            variant=r.variant,
        )
        assert stored == config.label()
    assert len({c.label() for c in configs}) == len(configs), "two configs of a suite share a label"
