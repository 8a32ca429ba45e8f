"""OpenVINO really runs the exported model (its outputs are ONNX Runtime's), at tiny sizes; the rest say why."""

from __future__ import annotations

import numpy as np
import pytest

from app.bench.config import BenchConfig
from app.bench.runner import run_config
from app.bench.runtimes import runtimes
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

pytest.importorskip("openvino", reason="openvino is not installed (./scripts/setup --dev on Linux x86-64)")

WORKLOADS = ("resnet50", "bert_base", "lstm")


def first_output(runtime: str, config: BenchConfig) -> np.ndarray:
    """The first output of one step, on inputs drawn from the same seed for every runtime."""
    import torch

    from app.bench.variants import workload_for

    runtime_ = runtimes.get(runtime)()
    workload = workload_for(config.workload, config.variant)
    # the first prepare exports the model, drawing its random weights: only then are the inputs seeded
    runtime_.prepare(config, workload, "tiny").close()
    torch.manual_seed(0)
    prepared = runtime_.prepare(config, workload, "tiny")
    try:
        outputs = prepared.step()
        first = outputs[0] if isinstance(outputs, list) else next(iter(outputs.values()))  # type: ignore[attr-defined]
        return np.array(first, copy=True)
    finally:
        prepared.close()


@pytest.mark.parametrize("workload", WORKLOADS)
def test_fp32_outputs_match_onnxruntime(workload: str) -> None:
    config = BenchConfig(workload, Task.infer, "openvino", "cpu", Precision.fp32, 2, 2)
    assert runtimes.get("openvino")().unsupported(config, machine()) is None
    ours = first_output("openvino", config)
    reference = first_output(
        "onnxruntime-cpu", BenchConfig(workload, Task.infer, "onnxruntime-cpu", "cpu", Precision.fp32, 2, 2)
    )
    assert ours.shape == reference.shape
    np.testing.assert_allclose(ours, reference, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_fp32_config_is_measured_through_the_harness(workload: str) -> None:
    result = run_config(
        BenchConfig(workload, Task.infer, "openvino", "cpu", Precision.fp32, 2, 2), machine(), TINY, size="tiny"
    )
    assert result.status is ResultStatus.ok, result.reason
    assert result.iterations == 2 and result.threads == 2
    assert result.latency_p50_ms and result.throughput_samples_per_s and result.throughput_samples_per_s > 0


def test_bf16_runs_where_the_cpu_has_it() -> None:
    config = BenchConfig("resnet50", Task.infer, "openvino", "cpu", Precision.bf16, 2, 2)
    reason = runtimes.get("openvino")().unsupported(config, machine())
    if reason:
        assert "bf16" in reason or "BF16" in reason
        pytest.skip(f"no bf16 here: {reason}")
    ours = first_output("openvino", config)
    reference = first_output("openvino", BenchConfig("resnet50", Task.infer, "openvino", "cpu", Precision.fp32, 2, 2))
    assert np.isfinite(ours).all()
    # bf16 keeps 8 bits of mantissa: the classes' scores agree roughly, not to the digit.
    assert np.corrcoef(ours.ravel(), reference.ravel())[0, 1] > 0.9


@pytest.mark.parametrize(
    ("task", "device", "precision", "words"),
    [
        (Task.train, "cpu", Precision.fp32, "inference only"),
        (Task.infer, "cpu", Precision.fp16, "fp16 is not offered"),
        (Task.infer, "cpu", Precision.tf32, "tensor-core"),
        (Task.infer, "cpu", Precision.int8, "ask variant int8-static"),
        (Task.infer, "cuda:0", Precision.fp32, "runs on cpu devices"),
    ],
)
def test_what_it_cannot_run_is_unsupported_with_why(task: Task, device: str, precision: Precision, words: str) -> None:
    result = run_config(BenchConfig("resnet56", task, "openvino", device, precision, 1), machine(), TINY, size="tiny")
    assert result.status is ResultStatus.unsupported
    assert words in (result.reason or "")


def test_int8_static_is_nncf_quantised_and_close_to_fp32() -> None:
    """NNCF puts FakeQuantize operations (int8 scales) in the model; the CPU plug-in runs them as int8
    kernels, and the scores stay close to the float model's."""
    pytest.importorskip("nncf", reason="nncf is not installed (./scripts/setup on Linux x86-64)")
    import openvino

    from app.bench.runtimes.openvino import quantised_path
    from app.bench.variants import workload_for

    config = BenchConfig("resnet20", Task.infer, "openvino", "cpu", Precision.int8, 4, 2, variant="int8-static")
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.variant == "int8-static"
    path = quantised_path(workload_for("resnet20", "int8-static"), "tiny")
    ops = {op.get_type_name() for op in openvino.Core().read_model(str(path)).get_ops()}
    assert "FakeQuantize" in ops
    ours = first_output("openvino", config)
    reference = first_output("openvino", BenchConfig("resnet20", Task.infer, "openvino", "cpu", Precision.fp32, 4, 2))
    assert np.corrcoef(ours.ravel(), reference.ravel())[0, 1] > 0.9


def test_version_is_reported() -> None:
    import openvino

    runtime = runtimes.get("openvino")
    version = runtime.version()
    assert version and openvino.__version__.startswith(version)
    assert runtime.software()["openvino"] == runtime.version()
    assert "openvino.build" in runtime.software()


@pytest.mark.parametrize(("batch", "optimal", "requests"), [(1, 4, 1), (4, 4, 4), (6, 4, 3), (8, 2, 2), (7, 4, 1)])
def test_the_throughput_hint_splits_the_batch_into_equal_requests(batch: int, optimal: int, requests: int) -> None:
    from app.bench.runtimes.openvino_throughput import requests_for

    assert requests_for(batch, optimal) == requests


def test_the_throughput_hint_runs_the_batch_as_requests_in_flight() -> None:
    """The batch of 4 split over the plug-in's requests: the step's samples are the whole batch's,
    and every request's output is there to take."""
    config = BenchConfig("resnet50", Task.infer, "openvino-throughput", "cpu", Precision.fp32, 4, 2)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.runtime == "openvino-throughput" and result.iterations == 2
    assert result.throughput_samples_per_s == pytest.approx(4 / (result.latency_p50_ms / 1000))  # type: ignore[operator]
    compiled = runtimes.get("openvino-throughput")().compile_config(config)
    assert compiled["PERFORMANCE_HINT"] == "THROUGHPUT" and compiled["INFERENCE_NUM_THREADS"] == 2
