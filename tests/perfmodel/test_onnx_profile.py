"""An ONNX file's profile: counted as the zoo's torch profiler counts the same model, linear in the
batch, weights at the precision's bytes, and refusals that say what to do."""

from __future__ import annotations

import io
import warnings

import onnx
import pytest
import torch
from onnx import TensorProto, helper
from torch import nn

from app.bench import profiling
from app.bench.onnx_export import model_path
from app.bench.workloads import get_workload
from app.contracts import CustomWorkload, OpClass, Precision, Task
from app.errors import InvalidInput
from app.perfmodel import custom, onnx_profile
from app.perfmodel.onnx_graph import concrete, parse


class TinyAttention(nn.Module):
    """One attention layer and an MLP, written with matmuls as a hand-made transformer would be."""

    def __init__(self, width: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, w = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        scores = torch.softmax(q @ k.transpose(-1, -2) / (w // self.heads) ** 0.5, dim=-1)
        x = self.norm(x + self.out((scores @ v).transpose(1, 2).reshape(b, s, w)))
        return x + self.mlp(x)


def _export(model: nn.Module, sample: torch.Tensor) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model.eval(),
            (sample,),
            buffer,
            input_names=["x"],
            output_names=["output"],
            dynamic_axes={"x": {0: "batch"}, "output": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    return buffer.getvalue()


@pytest.fixture(scope="module")
def attention_file() -> bytes:
    torch.manual_seed(0)
    return _export(TinyAttention(), torch.randn(1, 16, 32))


@pytest.mark.parametrize("name", ["resnet56", "lstm", "fcn_r"])
def test_flops_agree_with_the_zoo_torch_profiler(name: str) -> None:
    workload = get_workload(name)
    data = model_path(workload, "tiny").read_bytes()  # the file the onnxruntime runtime runs
    shape = workload.sample_shape("tiny")
    dims = {"sequence": shape["sequence"]} if "sequence" in shape else {}
    found = onnx_profile.profile(data, Precision.fp32, name=name, dims=dims).profile
    zoo = profiling.profile(workload, Task.infer, Precision.fp32, size="tiny")
    assert found.flops(8) == pytest.approx(zoo.flops(8), rel=0.02)
    for cls in (OpClass.conv, OpClass.gemm, OpClass.recurrent):
        ours = sum(b.flops.at(8) for b in found.buckets if b.op_class is cls)
        theirs = sum(b.flops.at(8) for b in zoo.buckets if b.op_class is cls)
        assert ours == pytest.approx(theirs, rel=0.01), cls
    assert found.memory.weights == pytest.approx(zoo.memory.weights, rel=0.02)


def test_the_profile_is_what_the_graph_counts_at_any_batch(attention_file: bytes) -> None:
    found = onnx_profile.profile(attention_file, Precision.fp32, dims={})
    step = onnx_profile.count(concrete(parse(attention_file), 7, {}), Precision.fp32)
    assert found.profile.flops(7) == pytest.approx(sum(op.flops for op in step.ops))
    assert found.profile.bytes(7) == pytest.approx(sum(op.bytes for op in step.ops))
    assert found.profile.flops(7) == pytest.approx(7 * found.profile.flops(1))  # FLOPs all scale with the batch


def test_weights_are_parameters_at_the_precisions_bytes(attention_file: bytes) -> None:
    parameters = sum(p.numel() for p in TinyAttention().parameters())
    for precision, size in ((Precision.fp32, 4), (Precision.bf16, 2)):
        found = onnx_profile.profile(attention_file, precision)
        assert found.parameters == parameters
        assert found.profile.memory.weights == parameters * size
    fp32, bf16 = (onnx_profile.profile(attention_file, p).profile for p in (Precision.fp32, Precision.bf16))
    assert bf16.bytes(4) == pytest.approx(fp32.bytes(4) / 2, rel=1e-3)  # integer tensors keep their size


def test_matmuls_of_two_activations_are_attention(attention_file: bytes) -> None:
    found = onnx_profile.profile(attention_file).profile
    flops = {cls: sum(b.flops.per_sample for b in found.buckets if b.op_class is cls) for cls in OpClass}
    assert flops[OpClass.attention] == 2 * 2 * 16 * 16 * 32  # QKᵀ and PV: 2 x S x S x width each
    assert flops[OpClass.gemm] == 2 * 16 * 32 * (3 * 32 + 32 + 4 * 32 + 4 * 32)
    assert flops[OpClass.norm] > 0 and flops[OpClass.reduction] > 0  # LayerNorm; softmax
    assert not onnx_profile.profile(attention_file).unknown


def _graph(op: str, domain: str = "") -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 8], [0.0] * 64)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node(op, ["h"], ["y"], domain=domain)]
    graph = helper.make_graph(nodes, "g", [x], [y], [w])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets)


def test_an_unknown_operator_is_listed_and_counted_as_movement() -> None:
    found = onnx_profile.profile(_graph("FooBar", "com.example").SerializeToString())
    assert found.unknown == {"FooBar": 1}
    assert "FooBar x1" in found.profile.made_with
    assert any(b.op_class is OpClass.movement and b.flops.per_sample == 0 for b in found.profile.buckets)
    assert found.profile.flops(1) == 2 * 8 * 8  # the MatMul is still counted


def test_external_data_is_refused_with_what_to_do() -> None:
    model = _graph("Relu")
    weight = model.graph.initializer[0]
    weight.ClearField("float_data")
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value="../../etc/passwd")
    with pytest.raises(InvalidInput, match="external data") as caught:
        onnx_profile.profile(model.SerializeToString())
    assert "save_as_external_data=False" in str(caught.value)


def test_a_graph_without_a_batch_dimension_is_refused() -> None:
    model = _graph("Relu")
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    with pytest.raises(InvalidInput, match=r"no dynamic batch dimension.*dynamic_axes"):
        onnx_profile.profile(model.SerializeToString())


def test_other_symbolic_dimensions_need_sizes() -> None:
    model = _graph("Relu")
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "width"
    with pytest.raises(InvalidInput, match="width"):
        onnx_profile.profile(model.SerializeToString())
    assert onnx_profile.profile(model.SerializeToString(), dims={"width": 8}).profile.flops(1) == 2 * 8 * 8 + 8


def test_garbage_is_not_a_model() -> None:
    with pytest.raises(InvalidInput, match="not an ONNX model"):
        onnx_profile.profile(b"\x00\xffnot a protobuf" * 10)


def test_the_custom_workload_runs_the_same_buckets(attention_file: bytes) -> None:
    found = onnx_profile.profile(attention_file, Precision.bf16)
    workload = CustomWorkload.model_validate_json(found.custom().model_dump_json())
    again = custom.profile(workload, Precision.bf16)
    assert again.buckets == found.profile.buckets
    assert again.memory.weights == found.profile.memory.weights
    assert custom.profile(workload, Precision.fp32).bytes(4) == pytest.approx(2 * found.profile.bytes(4), rel=0.01)


def test_a_custom_workload_whose_totals_contradict_its_buckets_is_refused(attention_file: bytes) -> None:
    body = onnx_profile.profile(attention_file).custom().model_dump()
    body["flops_per_sample"] *= 2
    with pytest.raises(ValueError, match="buckets sum to"):
        CustomWorkload.model_validate(body)
