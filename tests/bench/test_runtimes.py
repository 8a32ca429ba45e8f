"""Every workload x runtime x precision this CPU supports runs (at a tiny size); the rest say why."""

from __future__ import annotations

import pytest

from app.bench.config import BenchConfig
from app.bench.runner import run_config
from app.bench.workloads import get_workload, workloads
from app.bench.workloads.llama import LlmWorkload
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine


def matrix() -> list[BenchConfig]:
    """Every workload in every precision, but one preset per language-model family (its presets share
    every line of code); a distillation student in fp32 only: its layers are its teacher's (basic
    blocks, BERT layers), which run in every precision here already."""
    configs = []
    llms = [name for name in workloads.names() if isinstance(get_workload(name), LlmWorkload)]
    for name in [n for n in workloads.names() if n not in llms[1:]]:
        student = workloads.get(name).info.student_of is not None
        for precision in [Precision.fp32] if student else list(Precision):
            for task in Task:
                configs.append(BenchConfig(name, task, "torch-eager", "cpu", precision, 2, 2))
            configs.append(BenchConfig(name, Task.infer, "onnxruntime-cpu", "cpu", precision, 2, 2))
    return configs


@pytest.mark.parametrize("config", matrix(), ids=lambda c: c.label().replace(" ", "-"))
def test_config_runs_or_says_why_not(config: BenchConfig) -> None:
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status in (ResultStatus.ok, ResultStatus.unsupported), result.reason
    if result.status is ResultStatus.unsupported:
        assert result.reason
        return
    assert result.iterations == 2
    assert result.throughput_samples_per_s and result.throughput_samples_per_s > 0
    assert result.latency_p50_ms and result.latency_p99_ms and result.latency_p50_ms <= result.latency_p99_ms
    assert result.threads == 2
    assert result.peak_memory_mb and result.peak_memory_mb > 50
    if result.energy_per_sample_j is not None:  # two tiny steps can be too short for a CPU estimate
        assert result.power_source.value in ("rapl", "estimate") and result.energy_per_sample_j > 0


def test_what_this_cpu_cannot_run_is_unsupported_not_run_otherwise() -> None:
    spec = machine()
    for precision, words in ((Precision.tf32, "tensor-core"), (Precision.int8, "ONNX Runtime")):
        result = run_config(BenchConfig("resnet56", Task.infer, "torch-eager", "cpu", precision, 1), spec, TINY)
        assert result.status is ResultStatus.unsupported and words in (result.reason or "")
    if "avx512_bf16" not in spec.cpu.isa_features and "amx_bf16" not in spec.cpu.isa_features:
        result = run_config(BenchConfig("resnet56", Task.infer, "torch-eager", "cpu", Precision.bf16, 1), spec, TINY)
        assert result.status is ResultStatus.unsupported and "bf16" in (result.reason or "")
    train = run_config(BenchConfig("resnet56", Task.train, "onnxruntime-cpu", "cpu", Precision.fp32, 1), spec, TINY)
    assert train.status is ResultStatus.unsupported and "inference only" in (train.reason or "")
    gpu = run_config(BenchConfig("resnet56", Task.infer, "torch-eager", "cuda:0", Precision.fp32, 1), spec, TINY)
    if not any(d.id == "cuda:0" for d in spec.devices):
        assert gpu.status is ResultStatus.unsupported and "no device cuda:0" in (gpu.reason or "")


@pytest.mark.slow
@pytest.mark.alone  # compares the compile's wall clock with a step's
@pytest.mark.parametrize("variant", [None, "pruned-50"])
def test_torch_compile_reports_compile_time_apart_from_speed(variant: str | None) -> None:
    config = BenchConfig("fcn_r", Task.infer, "torch-compile", "cpu", Precision.fp32, 8, 2, variant=variant)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.variant == variant
    assert result.compile_time_s is not None and result.latency_p50_ms is not None
    assert result.compile_time_s * 1000 > 10 * result.latency_p50_ms, "compiling costs far more than one step"


def test_tensorrt_is_unsupported_without_an_nvidia_gpu_and_says_what_it_needs() -> None:
    spec = machine()
    if any(d.kind.value == "cuda" for d in spec.devices):
        pytest.skip("this machine has a GPU: TensorRT is exercised on it by the GPU suites")
    for device in ("cpu", "cuda:0"):
        config = BenchConfig("resnet50", Task.infer, "tensorrt", device, Precision.fp16, 1)
        result = run_config(config, spec, TINY, size="tiny")
        assert result.status is ResultStatus.unsupported and "NVIDIA GPUs only" in (result.reason or "")
