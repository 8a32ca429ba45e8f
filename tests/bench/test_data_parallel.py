"""Data-parallel measurement with real processes: two gloo ranks train a tiny zoo model and
all-reduce a buffer; configs that cannot run on N devices say what to do instead."""

from __future__ import annotations

import pytest

from app.bench import data_parallel
from app.bench.config import BenchConfig
from app.bench.report import render_results
from app.bench.runner import run_config, unsupported_reason
from app.bench.suites import Suite, default_threads
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

MIB = 2**20


def test_two_gloo_processes_train_with_a_measured_scaling_efficiency() -> None:
    config = BenchConfig("resnet20", Task.train, "torch-eager", "cpu", Precision.fp32, 4, None, 2)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.devices == 2 and result.threads == max(1, data_parallel.usable_cpus(machine()) // 2)
    assert result.throughput_samples_per_s and result.latency_p50_ms and result.iterations == 2
    # the aggregate: both ranks' batches per synchronised step
    assert result.throughput_samples_per_s == pytest.approx(2 * 4 / (result.latency_p50_ms / 1000))
    assert result.scaling_efficiency is not None and 0 < result.scaling_efficiency <= 1.5
    row = render_results([result]).splitlines()[1]
    assert "cpu x2" in row and "scaling)" in row


def test_allreduce_reports_ring_bus_bandwidth() -> None:
    config = BenchConfig("allreduce_64mb", None, "torch-eager", "cpu", Precision.fp32, 1, None, 2)
    result = run_config(config, machine(), TINY)
    assert result.status is ResultStatus.ok, result.reason
    assert result.bandwidth_gb_per_s and result.latency_p50_ms and result.scaling_efficiency is None
    # 2 (N - 1) / N of the buffer crosses each rank's link: for two ranks, the buffer itself
    assert result.bandwidth_gb_per_s == pytest.approx(64 * MIB / (result.latency_p50_ms / 1000) / 1e9)


@pytest.mark.parametrize(
    ("config", "advice"),
    [
        (BenchConfig("resnet20", Task.infer, "torch-eager", "cpu", Precision.fp32, 4, None, 2), "use task train"),
        (BenchConfig("resnet20", Task.train, "onnxruntime-cpu", "cpu", Precision.fp32, 4, None, 2), "torch-eager"),
        (BenchConfig("gemm_1024", None, "torch-eager", "cpu", Precision.fp32, 1, None, 2), "use devices=1"),
        (BenchConfig("allreduce_64mb", None, "torch-eager", "cpu", Precision.fp32, 1, None, 1), "devices=2 or more"),
        (BenchConfig("resnet20", Task.train, "torch-eager", "cpu", Precision.fp32, 4, None, 1024), "or fewer"),
    ],
)
def test_a_config_that_cannot_run_on_n_devices_says_what_to_do(config: BenchConfig, advice: str) -> None:
    reason = unsupported_reason(config, machine())
    assert reason is not None and advice in reason
    result = run_config(config, machine(), TINY)
    assert result.status is ResultStatus.unsupported and result.devices == config.devices


def test_two_ranks_are_allowed_on_any_cpu() -> None:
    config = BenchConfig("resnet20", Task.train, "torch-eager", "cpu", Precision.fp32, 4, None, 2)
    assert data_parallel.unsupported(config, machine()) is None


def test_a_suite_names_device_counts_and_splits_the_cpus_among_ranks() -> None:
    suite = Suite.model_validate(
        {
            "name": "dp",
            "grid": [{"workloads": ["resnet20"], "tasks": ["train"], "device_counts": [1, 2], "batch_sizes": [8]}],
        }
    )
    configs = suite.configs(machine())
    assert [(c.devices, c.threads) for c in configs] == [
        (1, default_threads(machine())),
        (2, max(1, default_threads(machine()) // 2)),
    ]
    assert configs[1].label().endswith("devices=2") and "devices" not in configs[0].label()
