"""Data-parallel measurement with real processes: two gloo ranks train a tiny zoo model and
all-reduce a buffer; configs that cannot run on N devices say what to do instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.bench import data_parallel
from app.bench.config import BenchConfig
from app.bench.report import render_results
from app.bench.runner import run_config, unsupported_reason
from app.bench.suites import Suite, default_threads
from app.contracts import Precision, ResultStatus, RunReport, Task
from testkit import ROOT
from testkit.processes import free_port
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


def test_two_machines_train_together_and_node_0_records_the_run(tmp_path: Path) -> None:
    """Two `hwadvisor bench --nodes 2` processes (two machines of a declared cluster, here on one
    host) meet at node 0's port; each runs one gloo rank; node 0 keeps the result: two devices on two
    nodes, over the cluster, with the scaling efficiency against one device measured in the same run."""
    suite = tmp_path / "over.toml"
    suite.write_text(
        'name = "over"\n[[grid]]\nworkloads = ["resnet20"]\ntasks = ["train"]\nbatch_sizes = [4]\nthreads = [1]\n'
    )
    out = tmp_path / "run.json"
    common = [sys.executable, "-m", "app", "bench", "--suite", str(suite), "--iterations", "2", "--nodes", "2"]
    common += ["--master", f"127.0.0.1:{free_port()}", "--cluster", "rack-b"]
    lead = subprocess.Popen(
        [*common, "--node-rank", "0", "--out", str(out)],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    follow = subprocess.run([*common, "--node-rank", "1"], cwd=ROOT, text=True, capture_output=True, timeout=300)
    led = lead.communicate(timeout=300)
    assert lead.returncode == 0, led[1]
    assert follow.returncode == 0, follow.stderr
    assert "node 1 of 2: done; node 0 records the run" in follow.stdout
    (result,) = RunReport.model_validate_json(out.read_text()).results
    assert result.status is ResultStatus.ok, result.reason
    assert (result.devices, result.nodes, result.cluster, result.threads) == (2, 2, "rack-b", 1)
    assert result.throughput_samples_per_s == pytest.approx(2 * 4 / (result.latency_p50_ms / 1000))  # type: ignore[operator]
    assert result.scaling_efficiency is not None and result.scaling_efficiency > 0


def test_a_run_over_several_machines_needs_node_0s_address() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "--nodes", "2", "--node-rank", "1"],
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode != 0 and "--master HOST:PORT" in done.stderr and "Traceback" not in done.stderr
