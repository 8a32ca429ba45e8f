from __future__ import annotations

import pytest

from app.bench.config import BenchConfig
from app.bench.runner import run_config
from app.contracts import MeasureSpec, Precision, ResultStatus
from tests.bench.test_runtimes import machine

QUICK = MeasureSpec(time_budget_s=0.5, warmup_budget_s=0.2)


def test_gemm_tflops_is_two_n_cubed_over_time() -> None:
    result = run_config(BenchConfig("gemm_1024", None, "torch-eager", "cpu", Precision.fp32, 1, 1), machine(), QUICK)
    assert result.status is ResultStatus.ok and result.achieved_tflops and result.latency_p50_ms
    assert result.achieved_tflops == pytest.approx(2 * 1024**3 / (result.latency_p50_ms / 1000) / 1e12)
    assert result.workload == "gemm_1024" and result.threads == 1


def test_cpu_copy_reports_read_plus_write_bandwidth() -> None:
    result = run_config(BenchConfig("copy_64mb", None, "torch-eager", "cpu", Precision.fp32, 1, 2), machine(), QUICK)
    assert result.status is ResultStatus.ok and result.bandwidth_gb_per_s and result.latency_p50_ms
    assert result.bandwidth_gb_per_s == pytest.approx(2 * 64 * 2**20 / (result.latency_p50_ms / 1000) / 1e9)
    assert 0.5 < result.bandwidth_gb_per_s < 1000


def test_host_device_copy_needs_a_gpu() -> None:
    result = run_config(
        BenchConfig("h2d_pinned_256mb", None, "torch-eager", "cpu", Precision.fp32, 1), machine(), QUICK
    )
    assert result.status is ResultStatus.unsupported and "GPU" in (result.reason or "")
