"""The CUDA paths on a real GPU: the live probe, every kind of config the suites run there, the
ceilings, NVML energy. Skipped where torch has no CUDA device (`pytest -m gpu` on a GPU machine runs
them; benchmarks/gpu_truth.sh runs them with the rest of a GPU's check)."""

from __future__ import annotations

from typing import Any

import pytest

from app.bench.config import BenchConfig
from app.bench.runner import run_config
from app.catalog import get as catalog_entry
from app.contracts import MeasureSpec, PowerSource, Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (run on a GPU machine)"),
]
GPU = "cuda:0"
SHORT = MeasureSpec(time_budget_s=0.5, warmup_budget_s=0.5, min_iterations=5)


def config(
    workload: str, task: Task | None, precision: Precision, batch: int, runtime: str = "torch-eager", **extra: Any
) -> BenchConfig:
    return BenchConfig(workload, task, runtime, GPU, precision, batch, **extra)


def test_the_live_probe_describes_the_gpu_as_torch_sees_it() -> None:
    spec = machine()
    gpu = spec.device(GPU)
    assert gpu is not None and gpu.nvidia is not None, spec.probe_errors
    props = torch.cuda.get_device_properties(0)
    assert gpu.name == props.name
    assert gpu.nvidia.sm_count == props.multi_processor_count
    assert gpu.nvidia.compute_capability == f"{props.major}.{props.minor}"
    assert abs(gpu.memory_total_mb - props.total_memory / 2**20) < 0.02 * gpu.memory_total_mb
    assert gpu.catalog_id is not None, f"{gpu.name} matched no catalog entry"
    assert gpu.nvidia.power_limit_w and gpu.nvidia.power_limit_w > 100
    assert spec.power_sensors.nvml_energy_counter is gpu.nvidia.energy_counter


@pytest.mark.parametrize("precision", [Precision.fp32, Precision.tf32, Precision.bf16, Precision.fp16])
@pytest.mark.parametrize("task", [Task.infer, Task.train])
def test_a_model_runs_in_every_precision_with_power_from_nvml(task: Task, precision: Precision) -> None:
    result = run_config(config("resnet18", task, precision, 32), machine(), SHORT)
    assert result.status is ResultStatus.ok, result.reason
    assert result.throughput_samples_per_s and result.throughput_samples_per_s > 100
    assert result.device == GPU and result.peak_memory_mb and result.peak_memory_mb > 10
    assert result.power_source is PowerSource.nvml and result.mean_power_w and result.mean_power_w > 20
    assert result.energy_per_sample_j and result.energy_per_sample_j > 0


def test_half_precision_is_faster_than_fp32_on_tensor_cores() -> None:
    fp32, bf16 = (
        run_config(config("bert_base", Task.infer, p, 64), machine(), SHORT) for p in (Precision.fp32, Precision.bf16)
    )
    assert fp32.throughput_samples_per_s and bf16.throughput_samples_per_s
    assert bf16.throughput_samples_per_s > 1.5 * fp32.throughput_samples_per_s


@pytest.mark.parametrize("workload", ["gemm_8192", "gemm_8192_nt"])
def test_bf16_gemm_reaches_a_fair_share_of_the_catalog_peak(workload: str) -> None:
    gpu = machine().device(GPU)
    assert gpu is not None and gpu.catalog_id
    peak = catalog_entry(gpu.catalog_id).peak_bf16_tflops
    result = run_config(config(workload, None, Precision.bf16, 1), machine(), SHORT)
    assert result.status is ResultStatus.ok, result.reason
    assert peak and result.achieved_tflops and 0.4 * peak < result.achieved_tflops < 1.05 * peak


def test_int8_gemm_runs_on_cuda() -> None:
    result = run_config(config("gemm_8192", None, Precision.int8, 1), machine(), SHORT)
    assert result.status is ResultStatus.ok, result.reason
    assert result.achieved_tflops and result.achieved_tflops > 50


def test_device_copy_reaches_a_fair_share_of_the_memory_bandwidth() -> None:
    gpu = machine().device(GPU)
    assert gpu is not None and gpu.catalog_id
    bandwidth = catalog_entry(gpu.catalog_id).memory_bandwidth_gb_s
    result = run_config(config("copy_1024mb", None, Precision.fp32, 1), machine(), SHORT)
    assert result.status is ResultStatus.ok, result.reason
    assert bandwidth and result.bandwidth_gb_per_s and 0.4 * bandwidth < result.bandwidth_gb_per_s < 1.1 * bandwidth


@pytest.mark.parametrize(
    "workload", ["h2d_pinned_256mb", "h2d_pageable_256mb", "d2h_pinned_256mb", "d2h_pageable_256mb"]
)
def test_host_device_copies_run(workload: str) -> None:
    result = run_config(config(workload, None, Precision.fp32, 1), machine(), SHORT)
    assert result.status is ResultStatus.ok, result.reason
    assert result.bandwidth_gb_per_s and 1 < result.bandwidth_gb_per_s < 200


def test_torch_compile_runs_and_records_its_compile_time() -> None:
    result = run_config(config("resnet18", Task.infer, Precision.bf16, 32, runtime="torch-compile"), machine(), TINY)
    assert result.status is ResultStatus.ok, result.reason
    assert result.compile_time_s and result.compile_time_s > 0


@pytest.mark.parametrize("runtime", ["onnxruntime-cuda", "tensorrt"])
def test_a_gpu_graph_runtime_runs_or_says_what_it_needs(runtime: str) -> None:
    result = run_config(config("resnet18", Task.infer, Precision.fp32, 8, runtime=runtime), machine(), TINY)
    assert result.status in (ResultStatus.ok, ResultStatus.unsupported), result.reason
    if result.status is ResultStatus.unsupported:
        assert result.reason and len(result.reason) > 20


@pytest.mark.parametrize("task", [Task.prefill, Task.decode])
def test_a_language_model_runs_on_the_gpu(task: Task) -> None:
    result = run_config(config("llama_135m", task, Precision.bf16, 4, context=256), machine(), SHORT)
    assert result.status is ResultStatus.ok, result.reason
    assert result.throughput_tokens_per_s and result.throughput_tokens_per_s > 100
    assert result.kv_cache_mb and result.kv_cache_mb > 0
