"""A zoo step's few-row fp32 linear layers on an AMD CPU run on the threads MKL gives them
(app/perfmodel/model.py ``few_row_shares``; the grid: app/perfmodel/mkl_split.py)."""

from __future__ import annotations

from unittest import mock

import pytest

from app.catalog import get
from app.contracts import Precision, Task
from app.perfmodel import model
from app.perfmodel.device import device
from app.perfmodel.model import rows_per_sample, step
from app.perfmodel.params import shipped as calibration
from app.perfmodel.profile import OpClass, shipped


def alexnet_on(
    part: str, batch: int, threads: int | None, runtime: str = "torch-eager", task: Task = Task.infer
) -> model.Breakdown:
    dev = device(get(part), Precision.fp32)
    assert dev is not None
    profile = shipped()[("alexnet", task, Precision.fp32)]
    return step(profile, dev, batch, calibration().of("cpu"), runtime=runtime, threads=threads)


def without_rule(
    part: str, batch: int, threads: int | None, runtime: str = "torch-eager", task: Task = Task.infer
) -> model.Breakdown:
    with mock.patch.object(model, "few_row_shares", lambda c, rows: None):
        return alexnet_on(part, batch, threads, runtime, task)


def test_a_linear_layer_takes_one_row_per_sample_and_a_transformer_its_tokens() -> None:
    profiles = shipped()
    classifier = [rows_per_sample(b) for b in profiles[("alexnet", Task.infer, Precision.fp32)].buckets]
    assert [round(r, 2) for r in classifier if r] == [1.0]
    bert = [rows_per_sample(b) for b in profiles[("bert_base", Task.infer, Precision.fp32)].buckets]
    assert max(bert) == pytest.approx(128, rel=0.01)  # the encoder's layers: a sequence of 128 tokens each
    for b in profiles[("resnet50", Task.infer, Precision.fp32)].buckets:
        assert (rows_per_sample(b) > 0) == (b.op_class is OpClass.gemm)  # convolutions are oneDNN's


def test_alexnets_batch_1_classifier_runs_on_one_of_an_epycs_96_cores() -> None:
    found = alexnet_on("epyc-9654", 1, 96)
    assert found.product_threads == 1
    assert found.seconds > 2 * without_rule("epyc-9654", 1, 96).seconds  # 234 MB read by one core
    # 64 rows fill MKL's grid of 96 threads (12 columns x 8 groups of 8 rows): every core does the math,
    wide, every = alexnet_on("epyc-9654", 64, 96), without_rule("epyc-9654", 64, 96)
    assert wide.product_threads is None and wide.compute_s == pytest.approx(every.compute_s)
    # but each group reads the whole classifier: its weights stream at the 12 column threads' rate
    assert wide.memory_s > 1.2 * every.memory_s


def test_a_second_thread_buys_a_batch_1_classifier_nothing_and_a_batch_8_one_its_share() -> None:
    # two threads: 1-4 rows on one (benchmarks/linear_rows.py), 5 and more on both
    for batch in (1, 4):
        assert alexnet_on("epyc-9654", batch, 2).product_threads == 1
    eight = alexnet_on("epyc-9654", 8, 2)
    assert eight.product_threads is None  # 8 rows: both threads do the math, one group each,
    assert eight.memory_s > 1.2 * without_rule("epyc-9654", 8, 2).memory_s  # and each reads every weight
    gained = alexnet_on("epyc-9654", 1, 1).seconds / alexnet_on("epyc-9654", 1, 2).seconds
    assert 1.0 < gained < without_rule("epyc-9654", 1, 1).seconds / without_rule("epyc-9654", 1, 2).seconds


@pytest.mark.parametrize(
    ("part", "runtime", "precision"),
    [
        ("xeon-platinum-8480plus", "torch-eager", Precision.fp32),  # MKL's own kernels on Intel: every thread
        ("epyc-9654", "onnxruntime-cpu", Precision.fp32),  # MLAS, not MKL
        ("epyc-9654", "torch-eager", Precision.bf16),  # oneDNN
    ],
)
def test_only_pytorchs_fp32_products_on_an_amd_cpu_take_fewer_threads(
    part: str, runtime: str, precision: Precision
) -> None:
    dev = device(get(part), precision)
    assert dev is not None
    profile = shipped()[("alexnet", Task.infer, precision)]
    found = step(profile, dev, 1, calibration().of("cpu"), runtime=runtime, threads=int(dev.units))
    assert found.product_threads is None


def test_a_training_steps_weight_gradients_use_every_thread_but_at_a_batch_of_one() -> None:
    """Forward and input gradient: the batch's rows on MKL's grid; the weight gradient (the layer's
    outputs as rows): every thread, but one at batch 1 (an outer product), as benchmarks/linear_rows.py's
    count showed at 2-96 threads."""

    def training(batch: int, threads: int) -> model.Breakdown:
        return alexnet_on("epyc-9654", batch, threads, task=Task.train)

    def seconds(batch: int, threads: int, rule: bool = True) -> float:
        run = alexnet_on if rule else without_rule
        return run("epyc-9654", batch, threads, task=Task.train).seconds

    assert training(1, 96).product_threads == 1
    assert training(4, 96).product_threads == 12
    assert training(64, 96).product_threads is None
    # at two threads a batch of 4's forward and input gradient are one thread's, its weight gradient both's:
    # a second thread buys more than at batch 1 (all one thread's), less than without the rule
    gained = {b: seconds(b, 1) / seconds(b, 2) for b in (1, 4)}
    assert 1.0 < gained[1] < gained[4] < seconds(4, 1, rule=False) / seconds(4, 2, rule=False)


def test_a_language_models_steps_are_left_to_their_own_rule() -> None:
    dev = device(get("epyc-9654"), Precision.fp32)
    assert dev is not None
    found = step(
        shipped()[("llama_135m", Task.decode, Precision.fp32)],
        dev,
        1,
        calibration().of("cpu"),
        runtime="torch-eager",
        threads=96,
    )
    assert found.product_threads is None
