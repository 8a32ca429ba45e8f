"""Keras 3 on TensorFlow really runs the zoo's Keras definitions, which are the torch models' (by
parameter count), eagerly and under XLA, at tiny sizes; what it does not run says why."""

from __future__ import annotations

import numpy as np
import pytest

from app.bench.config import BenchConfig
from app.bench.keras_zoo import KERAS_WORKLOADS
from app.bench.runner import run_config
from app.bench.runtimes import runtimes
from app.bench.workloads import count_parameters, workloads
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

pytest.importorskip("tensorflow", reason="tensorflow is not installed (pip install -e '.[keras]' or ./scripts/setup)")
pytest.importorskip("keras", reason="keras is not installed (pip install -e '.[keras]' or ./scripts/setup)")

THREADS = 2
"""Every TensorFlow config in a test process uses this count: TensorFlow fixes it at its start."""


def keras_models():  # type: ignore[no-untyped-def]
    from app.bench import keras_models
    from app.bench.tensorflow_support import tensorflow

    tensorflow(THREADS)
    return keras_models


def test_every_workload_the_runtime_lists_has_a_keras_definition() -> None:
    """keras_models and the runtimes take one list: each entry must build, at the tests' tiny size."""
    models = keras_models()
    assert models.KERAS_WORKLOADS is KERAS_WORKLOADS
    for name in KERAS_WORKLOADS:
        workload = workloads.get(name)()
        model = models.build(workload, "tiny")
        assert model.outputs, name


@pytest.mark.parametrize(("workload", "size"), [("resnet50", "standard"), ("mobilenet_v2", "standard")])
def test_cnns_have_the_torch_models_parameters(workload: str, size: str) -> None:
    """Trainable weights equal torch's parameters; BatchNorm's moving statistics, which Keras keeps
    as non-trainable weights, equal torch's running-stat buffers."""
    models = keras_models()
    model = models.build(workloads.get(workload)(), size)
    torch_model = workloads.get(workload)().make(size)
    stats = ("running_mean", "running_var")
    running = sum(b.numel() for name, b in torch_model.named_buffers() if name.endswith(stats))
    assert models.trainable_parameters(model) == count_parameters(torch_model)
    assert model.count_params() - models.trainable_parameters(model) == running


@pytest.mark.parametrize("name", ["bert_base", "bert_base_squad"])
def test_bert_has_the_torch_models_parameters(name: str) -> None:
    """BERT-base at tiny size: its layers (hidden 768, 12 heads), two of them."""
    models = keras_models()
    workload = workloads.get(name)()
    assert models.trainable_parameters(models.build(workload, "tiny")) == count_parameters(workload.make("tiny"))


def test_lstm_differs_from_torch_by_its_second_bias_only() -> None:
    """torch keeps two bias vectors per gate (b_ih + b_hh, cuDNN's convention), Keras one."""
    from app.bench.workloads.lstm import HIDDEN, LAYERS

    models = keras_models()
    workload = workloads.get("lstm")()
    keras_count = models.trainable_parameters(models.build(workload))
    assert count_parameters(workload.make()) - keras_count == 4 * HIDDEN * LAYERS
    assert keras_count == workload.info.parameters - 4 * HIDDEN * LAYERS


@pytest.mark.parametrize(
    ("workload", "variant", "size"),
    [
        ("resnet18", None, "standard"),
        ("distilbert", None, "tiny"),
        ("resnet50", "pruned-50", "standard"),
        ("bert_base_squad", "pruned-30", "tiny"),
    ],
)
def test_students_and_pruned_variants_have_the_torch_models_parameters(
    workload: str, variant: str | None, size: str
) -> None:
    """The Keras definitions built at the widths the torch surgery leaves are the same models."""
    from app.bench.variants import workload_for

    models = keras_models()
    varied = workload_for(workload, variant)
    assert models.trainable_parameters(models.build(varied, size)) == count_parameters(varied.make(size))


def test_a_pruned_lstm_differs_from_torch_by_its_second_bias_only() -> None:
    from app.bench.variants import workload_for
    from app.bench.workloads.lstm import HIDDEN, LAYERS

    models = keras_models()
    varied = workload_for("lstm", "pruned-50")
    difference = count_parameters(varied.make("tiny")) - models.trainable_parameters(models.build(varied, "tiny"))
    assert difference == 4 * (HIDDEN // 2) * LAYERS


def first_output(runtime: str, workload: str) -> np.ndarray:
    import torch

    torch.manual_seed(0)
    config = BenchConfig(workload, Task.infer, runtime, "cpu", Precision.fp32, 2, THREADS)
    prepared = runtimes.get(runtime)().prepare(config, workloads.get(workload)(), "tiny")
    try:
        return np.array(prepared.step(), copy=True)
    finally:
        prepared.close()


@pytest.mark.parametrize("workload", ["lstm", "bert_base_squad"])
def test_xla_computes_what_eager_computes(workload: str) -> None:
    eager, xla = first_output("keras", workload), first_output("keras-xla", workload)
    assert eager.shape == xla.shape == (2, workloads.get(workload)().tiny_sequence, *eager.shape[2:])
    np.testing.assert_allclose(xla, eager, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize(
    ("runtime", "task", "workload", "variant"),
    [
        ("keras", Task.infer, "mobilenet_v2", None),
        ("keras", Task.infer, "bert_base_squad", None),
        ("keras", Task.train, "lstm", None),
        ("keras", Task.infer, "resnet18", "pruned-50"),
        ("keras-xla", Task.infer, "mobilenet_v2", None),
        ("keras-xla", Task.train, "lstm", None),
        ("keras-xla", Task.infer, "lstm", "pruned-30"),
    ],
)
def test_configs_are_measured_through_the_harness(runtime: str, task: Task, workload: str, variant: str | None) -> None:
    config = BenchConfig(workload, task, runtime, "cpu", Precision.fp32, 2, THREADS, variant=variant)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.variant == variant
    assert result.iterations == 2 and result.threads == THREADS
    assert result.throughput_samples_per_s and result.throughput_samples_per_s > 0
    assert (result.compile_time_s is not None) is (runtime == "keras-xla")


def test_a_train_step_lowers_the_loss_on_its_batch() -> None:
    config = BenchConfig("lstm", Task.train, "keras", "cpu", Precision.fp32, 4, THREADS)
    prepared = runtimes.get("keras")().prepare(config, workloads.get("lstm")(), "tiny")
    try:
        losses = [float(prepared.step()) for _ in range(4)]  # type: ignore[arg-type]
    finally:
        prepared.close()
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]


@pytest.mark.parametrize(
    ("workload", "device", "precision", "threads", "words"),
    [
        ("resnet50", "cpu", Precision.bf16, THREADS, "fp32 here; bf16 is not offered"),
        ("resnet50", "cpu", Precision.int8, THREADS, "litert"),
        ("resnet50", "cuda:0", Precision.fp32, None, "CPU only"),
        ("alexnet", "cpu", Precision.fp32, THREADS, "no Keras definition"),
        ("lstm", "cpu", Precision.fp32, THREADS + 1, "fixes its thread pools once per process"),
    ],
)
def test_what_it_cannot_run_is_unsupported_with_why(
    workload: str, device: str, precision: Precision, threads: int | None, words: str
) -> None:
    keras_models()  # TensorFlow started with THREADS
    for runtime in ("keras", "keras-xla"):
        config = BenchConfig(workload, Task.infer, runtime, device, precision, 1, threads)
        result = run_config(config, machine(), TINY, size="tiny")
        assert result.status is ResultStatus.unsupported
        assert words in (result.reason or "")


def test_versions_are_reported() -> None:
    import keras
    import tensorflow as tf

    software = runtimes.get("keras-xla").software()
    assert software["tensorflow-cpu"] == tf.__version__ and software["keras"] == keras.__version__
    assert runtimes.get("keras").version() == tf.__version__
