"""Model variants really change the model: pruning removes channels, low-rank factorisation splits
layers, both by counted parameters; every runtime measures them at tiny sizes (the Keras and LiteRT
ones in their own test files), int8-static is static quantisation; what does not apply says why."""

from __future__ import annotations

import copy
import functools
import itertools

import pytest
import torch

from app.bench.config import BenchConfig
from app.bench.runner import run_config
from app.bench.suites import Suite
from app.bench.variants import variants, workload_for
from app.bench.workloads import count_parameters
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

PARAMETERS = {
    ("resnet50", "pruned-30"): 16_959_305,
    ("resnet50", "pruned-50"): 12_381_864,
    ("bert_base", "pruned-30"): 83_032_010,
    ("bert_base", "pruned-50"): 66_984_194,
    ("lstm", "pruned-30"): 4_930_652,
    ("lstm", "pruned-50"): 4_179_728,
    ("lstm", "lowrank-25"): 4_279_056,
    ("lstm", "lowrank-50"): 4_935_440,
    ("resnet20", "lowrank-25"): 76_586,
    ("resnet20", "lowrank-50"): 151_860,
    ("mobilenet_v2", "lowrank-25"): 1_314_773,
}
"""Each variant's count (the originals: 25,557,032, 109,483,778, 6,182,672, 269,722 and 3,504,872).
The low-rank ResNet-50 (7,969,064 at lowrank-25, 15,884,008 at lowrank-50) and BERT-base are left to
the benchmark: factorising their big layers takes seconds each on two cores."""


OUTPUTS = {
    "resnet50": (2, 1000),
    "bert_base": (2, 16, 2),
    "lstm": (2, 8, 10_000),
    "resnet20": (2, 10),
    "mobilenet_v2": (2, 1000),
}
"""The original models' outputs for two tiny samples: a variant answers in the same shape."""


@functools.cache
def original_model(workload: str) -> torch.nn.Module:
    """Built once per workload (BERT-base's random initialisation takes seconds on two cores)."""
    return workload_for(workload, None).make()


@pytest.mark.parametrize(("workload", "variant"), sorted(PARAMETERS), ids=[f"{w}-{v}" for w, v in sorted(PARAMETERS)])
def test_a_variant_has_its_counted_parameters_and_the_originals_outputs(workload: str, variant: str) -> None:
    """What ``make`` does in the variant (the seeded original, transformed), on a copy of the original."""
    original = workload_for(workload, None)
    model = variants.get(variant)().transform(copy.deepcopy(original_model(workload))).eval()
    assert count_parameters(model) == PARAMETERS[(workload, variant)] < original.info.parameters
    with torch.inference_mode():
        assert tuple(model(*original.inputs(2, "tiny")).shape) == OUTPUTS[workload]


def test_make_builds_the_variant() -> None:
    assert count_parameters(workload_for("lstm", "pruned-50").make()) == PARAMETERS[("lstm", "pruned-50")]


def test_the_counts_are_the_arithmetic_of_the_widths() -> None:
    """fcn_r, 784-2048-4096-1024-10: pruned by half every hidden width goes, 784-1024-2048-512-10;
    at a quarter rank each layer is two (r = a quarter of its smaller side: 196, 512, 256, and 2 for the
    last, since 2 x (1024 + 10) is still under 1024 x 10)."""
    widths = (784, 1024, 2048, 512, 10)
    pruned = sum(a * b + b for a, b in itertools.pairwise(widths))
    assert count_parameters(workload_for("fcn_r", "pruned-50").make()) == pruned == 3_957_258
    layers = ((784, 2048, 196), (2048, 4096, 512), (4096, 1024, 256), (1024, 10, 2))
    lowrank = sum(rank * (a + b) + b for a, b, rank in layers)
    assert count_parameters(workload_for("fcn_r", "lowrank-25").make()) == lowrank == 5_020_766


def test_pruning_keeps_the_strongest_channels() -> None:
    """The kept rows are the original's rows of largest L1 norm, values unchanged."""
    model = workload_for("fcn_r", None).make()
    first = model[0].weight.detach()
    kept = workload_for("fcn_r", "pruned-30").make()[0].weight.detach()
    strongest = torch.sort(torch.topk(first.abs().sum(dim=1), kept.shape[0]).indices).values
    assert kept.shape == (round(2048 * 0.7), 784) and torch.equal(kept, first[strongest])


def test_lowrank_is_the_rank_r_approximation() -> None:
    """On a weight that is rank 40 plus a little noise, rank 40 gives it back (as a true truncated
    SVD would); the factorised model is the original's function to that error."""
    from app.bench.models.lowrank import factors

    torch.manual_seed(0)
    weight = torch.randn(300, 40) @ torch.randn(40, 500) + 0.01 * torch.randn(300, 500)
    first, second = factors(weight, 40)
    best = torch.linalg.svd(weight)
    truncated = (best.U[:, :40] * best.S[:40]) @ best.Vh[:40]
    assert float((second @ first - weight).norm()) == pytest.approx(float((truncated - weight).norm()), rel=1e-3)


def test_bert_is_pruned_by_heads_and_feed_forward_units() -> None:
    layer = workload_for("bert_base_squad", "pruned-50").make("tiny").bert.layers[0]
    assert layer.heads == 6 and layer.query.out_features == 6 * 64 and layer.attention_out.in_features == 384
    assert layer.intermediate.out_features == 1536 and layer.output.in_features == 1536


@pytest.mark.parametrize(
    ("runtime", "workload", "variant", "precision", "task"),
    [
        ("torch-eager", "resnet20", "pruned-50", Precision.fp32, Task.train),
        ("torch-eager", "lstm", "lowrank-25", Precision.fp32, Task.infer),
        ("onnxruntime-cpu", "resnet20", "pruned-30", Precision.fp32, Task.infer),
        ("onnxruntime-cpu", "resnet20", "lowrank-50", Precision.int8, Task.infer),
        ("onnxruntime-cpu", "resnet20", "int8-static", Precision.int8, Task.infer),
        ("openvino", "lstm", "pruned-50", Precision.fp32, Task.infer),
    ],
)
def test_each_runtime_measures_a_variant(
    runtime: str, workload: str, variant: str, precision: Precision, task: Task
) -> None:
    if runtime == "openvino":
        pytest.importorskip("openvino", reason="openvino is not installed (./scripts/setup on Linux x86-64)")
    config = BenchConfig(workload, task, runtime, "cpu", precision, 2, 2, variant=variant)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.variant == variant and result.iterations == 2 and result.throughput_samples_per_s


def test_onnxruntime_static_int8_is_qdq_and_close_to_fp32() -> None:
    """int8-static: QuantizeLinear/DequantizeLinear around the operators, the scores near fp32's;
    int8 without a variant is the dynamic quantisation's file, another model."""
    import onnx
    import onnxruntime

    from app.bench.onnx_export import model_path

    workload = workload_for("resnet20", "int8-static")
    static, dynamic = (
        model_path(workload, "tiny", quantised="static"),
        model_path(workload, "tiny", quantised="dynamic"),
    )
    ops = {node.op_type for node in onnx.load(str(static)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    assert "DynamicQuantizeLinear" in {node.op_type for node in onnx.load(str(dynamic)).graph.node}
    x = workload.inputs(4, "tiny")[0].numpy()
    scores = {
        path: onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        for path in (static, model_path(workload, "tiny"))
    }
    a, b = (torch.from_numpy(found.ravel()) for found in scores.values())
    assert torch.corrcoef(torch.stack([a, b]))[0, 1] > 0.9


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (BenchConfig("resnet20", Task.infer, "torch-eager", "cpu", Precision.fp32, 1, variant="pruned-99"), "known:"),
        (BenchConfig("gemm_1024", None, "torch-eager", "cpu", Precision.fp32, 1, variant="pruned-50"), "primitive"),
        (
            BenchConfig("resnet20", Task.infer, "onnxruntime-cpu", "cpu", Precision.fp32, 1, variant="int8-static"),
            "ask precision int8",
        ),
        (
            BenchConfig("resnet20", Task.infer, "torch-eager", "cpu", Precision.int8, 1, variant="int8-static"),
            "does not measure quantisation variants",
        ),
        (
            BenchConfig("gnmt", Task.infer, "torch-eager", "cpu", Precision.fp32, 1, variant="pruned-50"),
            "no pruning plan",
        ),
        (
            BenchConfig("resnet50", Task.infer, "keras", "cpu", Precision.fp32, 1, variant="lowrank-25"),
            "takes: pruning",
        ),
        (
            BenchConfig("resnet50", Task.infer, "onnxruntime-cuda", "cuda:0", Precision.fp32, 1, variant="int8-static"),
            "",
        ),
    ],
    ids=lambda c: c.label() if isinstance(c, BenchConfig) else c,
)
def test_what_does_not_apply_is_unsupported_with_why(config: BenchConfig, words: str) -> None:
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.unsupported and words in (result.reason or "")
    assert result.variant == config.variant


def test_a_grid_expands_its_variants_and_none_is_the_original() -> None:
    suite = Suite.model_validate(
        {"name": "v", "grid": [{"workloads": ["resnet50", "gemm_1024"], "variants": ["none", "pruned-50", "none"]}]}
    )
    configs = suite.configs(machine())
    assert [(c.workload, c.variant) for c in configs] == [
        ("resnet50", None),
        ("resnet50", "pruned-50"),
        ("gemm_1024", None),
    ]


def test_every_variant_carries_the_speed_only_caveat() -> None:
    for entry in variants:
        assert entry.plugin.info.caveat == "speed only; check accuracy on your data"
        assert entry.plugin.info.details()["kind"] in ("quantisation", "pruning", "lowrank")
