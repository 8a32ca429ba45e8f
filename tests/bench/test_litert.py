"""LiteRT really runs the project's Keras models converted to .tflite, in fp32, fp16 (float16 weights),
int8 (dynamic range) and the int8-static variant (full-integer), and pruned, at tiny sizes; a converter
crash is one config's error; the rest say why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.bench.config import BenchConfig
from app.bench.runner import run_config, run_suite
from app.bench.runtimes import runtimes
from app.bench.suites import parse_suite
from app.bench.workloads import workloads
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is not installed (pip install -e '.[litert]')")
pytest.importorskip("tensorflow", reason="tensorflow is not installed: LiteRT's models are converted with it")

THREADS = 2


STATIC = "int8-static"
FORMS = [Precision.fp32, Precision.fp16, Precision.int8, STATIC]
"""What the tests convert MobileNetV2 to: each precision, and the int8-static variant."""


def run(workload: str, precision: Precision | str, batch: int = 2) -> np.ndarray:
    import torch

    from app.bench.variants import workload_for

    torch.manual_seed(0)
    variant = STATIC if precision == STATIC else None
    as_precision = Precision.int8 if variant else Precision(precision)
    config = BenchConfig(workload, Task.infer, "litert", "cpu", as_precision, batch, THREADS, variant=variant)
    assert runtimes.get("litert")().unsupported(config, machine()) is None
    prepared = runtimes.get("litert")().prepare(config, workload_for(workload, variant), "tiny")
    try:
        outputs = prepared.step()
        assert isinstance(outputs, list) and len(outputs) == 1
        return np.array(outputs[0], copy=True)
    finally:
        prepared.close()


@pytest.fixture(scope="module")
def mobilenet_outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Precision | str, np.ndarray]]:
    """Each form's scores, its file made by a suite's run in a cache of its own, which stays the model
    cache while the module's tests read the files (outside it they would convert them again elsewhere)."""
    from app.bench import litert_export

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HWADVISOR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        children = suite_converted(patch, "mobilenet_v2", FORMS)
        assert children == [sorted(litert_export.FORMATS)], "one child converts every form the suite runs"
        yield {form: run("mobilenet_v2", form) for form in FORMS}


def suite_converted(patch: pytest.MonkeyPatch, workload: str, forms: list[Precision | str]) -> list[list[str]]:
    """Run a suite of the workload in each form (each config measured, ok) and say which forms each
    conversion child was asked for."""
    from app.bench import litert_export

    children: list[list[str]] = []
    real = litert_export._convert_in_child

    def counted(workload: Any, size: Any, paths: dict[str, Path], batch: int) -> None:
        children.append(sorted(paths))
        real(workload, size, paths, batch)

    patch.setattr(litert_export, "_convert_in_child", counted)
    precisions = sorted({"int8" if form == STATIC else str(form) for form in forms})
    variants = sorted({"int8-static" if form == STATIC else "none" for form in forms})
    suite = parse_suite(
        f"""
        name = "forms"
        [measure]
        fixed_iterations = 2
        warmup_min = 1
        warmup_budget_s = 0.0
        [[grid]]
        workloads = ["{workload}"]
        runtimes = ["litert"]
        precisions = {json.dumps(precisions)}
        variants = {json.dumps(variants)}
        batch_sizes = [2]
        threads = [{THREADS}]
        """
    )
    done = run_suite(suite, machine(), size="tiny")
    ran = {(r.precision.value, r.variant) for r in done.results if r.status is ResultStatus.ok}
    assert len(ran) == len(forms), [(r.precision, r.variant, r.status, r.reason) for r in done.results]
    return children


@pytest.mark.parametrize("precision", FORMS)
def test_each_precision_runs_with_the_torch_models_output_shape(
    precision: Precision | str, mobilenet_outputs: dict[Precision | str, np.ndarray]
) -> None:
    import torch

    workload = workloads.get("mobilenet_v2")()
    with torch.inference_mode():
        expected = workload.make("tiny").eval()(*workload.inputs(2, "tiny")).shape
    output = mobilenet_outputs[precision]
    assert output.shape == tuple(expected) == (2, 1000)
    assert output.dtype == np.float32 and np.isfinite(output).all()
    # The same random weights, quantised: the scores agree with fp32's roughly, not to the digit.
    assert np.corrcoef(output.ravel(), mobilenet_outputs[Precision.fp32].ravel())[0, 1] > 0.9
    assert output.std() > 0.01  # not the constant a collapsed signal would give


def test_quantised_models_store_narrower_weights(mobilenet_outputs: dict[Precision | str, np.ndarray]) -> None:
    """int8 (dynamic range) keeps float activations between int8-weight kernels; int8-static
    quantises the activations too, so its tensors are int8 but for the float input and output."""
    from ai_edge_litert.interpreter import Interpreter

    from app.bench.litert_export import cached_path

    mobilenet = workloads.get("mobilenet_v2")()
    paths = {p: cached_path(mobilenet, "tiny", str(p), 2) for p in mobilenet_outputs}
    assert all(path.is_file() for path in paths.values()), "the suite's run made every form"
    sizes = {p: path.stat().st_size for p, path in paths.items()}
    assert sizes[Precision.fp16] < 0.6 * sizes[Precision.fp32]
    assert sizes[Precision.int8] < 0.35 * sizes[Precision.fp32] and sizes[STATIC] < 0.35 * sizes[Precision.fp32]
    details = {p: Interpreter(model_path=str(path)).get_tensor_details() for p, path in paths.items()}
    tensor_types = {p: {t["dtype"] for t in found} for p, found in details.items()}
    assert np.int8 in tensor_types[Precision.int8] and np.int8 not in tensor_types[Precision.fp32]
    assert np.float16 in tensor_types[Precision.fp16]
    floats = {p: sum(t["dtype"] == np.float32 for t in found) for p, found in details.items()}
    assert floats[STATIC] < 0.2 * floats[Precision.int8]


def test_the_lstm_runs_at_its_fixed_batch_through_the_harness() -> None:
    config = BenchConfig("lstm", Task.infer, "litert", "cpu", Precision.fp32, 3, THREADS)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.iterations == 2 and result.threads == THREADS
    assert result.throughput_samples_per_s and result.throughput_samples_per_s > 0
    assert run("lstm", Precision.fp32, batch=3).shape == (3, workloads.get("lstm")().tiny_sequence, 10_000)


def test_a_converter_crash_is_an_error_not_the_end_of_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full-integer calibrator segfaults on the Keras LSTM: the child dies, the bench process does
    not, and the form the child made before it is kept."""
    from app.bench.litert_export import cached_path, model_paths

    monkeypatch.setenv("HWADVISOR_CACHE_DIR", str(tmp_path))
    lstm = workloads.get("lstm")()
    with pytest.raises(RuntimeError, match="converting lstm to LiteRT int8-static failed"):
        model_paths(lstm, "tiny", ["int8-static", "fp32"], 2)
    assert cached_path(lstm, "tiny", "fp32", 2).is_file()
    assert not cached_path(lstm, "tiny", "int8-static", 2).exists()
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [cached_path(lstm, "tiny", "fp32", 2).name]


def test_a_pruned_lstm_runs_in_dynamic_range_int8() -> None:
    """The pruned variant is the Keras LSTM at the pruned width, its own file; int8 without a
    variant (dynamic range) converts where full-integer crashes."""
    config = BenchConfig("lstm", Task.infer, "litert", "cpu", Precision.int8, 2, THREADS, variant="pruned-50")
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.variant == "pruned-50" and result.throughput_samples_per_s


@pytest.mark.parametrize(
    ("workload", "task", "device", "precision", "words"),
    [
        ("resnet50", Task.train, "cpu", Precision.fp32, "inference only"),
        ("resnet50", Task.infer, "cpu", Precision.bf16, "bf16 is not offered"),
        ("resnet50", Task.infer, "cuda:0", Precision.fp32, "CPU only"),
        ("alexnet", Task.infer, "cpu", Precision.fp32, "no Keras definition"),
        ("lstm", Task.infer, "cpu", Precision.int8, "crashes"),
        ("resnet50", Task.infer, "cpu", Precision.fp32, "lowrank"),
        ("mobilenet_v2", Task.infer, "cpu", Precision.fp32, "cannot be built pruned"),
    ],
)
def test_what_it_cannot_run_is_unsupported_with_why(
    workload: str, task: Task, device: str, precision: Precision, words: str
) -> None:
    variant = {"crashes": STATIC, "lowrank": "lowrank-25", "cannot be built pruned": "pruned-30"}.get(words)
    config = BenchConfig(workload, task, "litert", device, precision, 1, variant=variant)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.unsupported
    assert words in (result.reason or "")


def test_version_is_reported() -> None:
    import importlib.metadata

    runtime = runtimes.get("litert")
    assert runtime.version() == importlib.metadata.version("ai-edge-litert")
    assert set(runtime.software()) >= {"ai-edge-litert", "tensorflow-cpu", "keras"}
