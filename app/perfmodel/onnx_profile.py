"""A custom workload's profile from an ONNX file, counted as the zoo's are (app/bench/profiling.py).

The graph (app/perfmodel/onnx_graph.py) is shape-inferred at two batch sizes and every node counted:

- its class (profile.OpClass) by op type (``CLASSES``); a MatMul of two activations (neither a
  weight) is ``attention`` (QKᵀ and PV: an exported attention layer is unfused MatMuls and a Softmax);
- its FLOPs: convolutions 2 x output elements x input channels per group x kernel volume; matrix
  products 2 x M x N x K over the broadcast batch dims; an LSTM/GRU/RNN layer its gates' GEMMs and
  ``CELL_ELEMENTWISE`` per hidden unit and step; else the zoo's fixed count per element
  (operators.PER_ELEMENT: output elements, reductions input elements, softmax ``SOFTMAX``);
- its bytes: every input and output tensor once (weights are read once per step, so they form the
  bucket's per-step part); a Gather reads the rows it gathers; a recurrent layer re-reads its
  recurrent weights every step and stores and reads its gates;
- its kernels: one per node. Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout) and
  nodes computing only from constants (Shape, Constant, shape arithmetic: a runtime folds them) cost
  nothing; a recurrent layer costs 1 + 2 per step and direction, as cuDNN's.

Floating-point tensors count the caller's precision's bytes per value (int8: 1 byte in the matrix-unit
classes, 2 elsewhere, the zoo's rule), whatever the file was exported at; integer tensors their own.
An op type not listed is counted as data movement with its bytes only, and named in the result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import onnx
from onnx import ModelProto, NodeProto

from app.contracts import CustomBucket, CustomWorkload, OnnxProfileRead, Precision, Task
from app.errors import InvalidInput
from app.perfmodel.custom import value_bytes
from app.perfmodel.onnx_graph import WEIGHT_TYPES, Graph, TensorInfo, concrete, exported_as, parse
from app.perfmodel.operators import CELL_ELEMENTWISE, PER_ELEMENT, SOFTMAX, OpCount, buckets, linear
from app.perfmodel.profile import Memory, OpClass, Profile

DEFAULT_BATCHES = (2, 4)
"""The zoo's (app/bench/profiling.DEFAULT_BATCHES)."""
FUSION = (
    "none: one kernel per ONNX node as the graph is written (no runtime graph optimisation), each reading "
    "its inputs and writing its outputs; views and constant-only nodes move nothing"
)

CLASSES: dict[str, OpClass] = {
    **dict.fromkeys(["Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "FusedConv"], OpClass.conv),
    **dict.fromkeys(["MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "FusedMatMul", "QGemm"], OpClass.gemm),
    **dict.fromkeys(["Attention", "MultiHeadAttention", "GroupQueryAttention"], OpClass.attention),
    **dict.fromkeys(["LSTM", "GRU", "RNN"], OpClass.recurrent),
    **dict.fromkeys(
        [
            "BatchNormalization",
            "LayerNormalization",
            "InstanceNormalization",
            "GroupNormalization",
            "RMSNormalization",
            "SimplifiedLayerNormalization",
            "SkipLayerNormalization",
            "SkipSimplifiedLayerNormalization",
            "LpNormalization",
            "MeanVarianceNormalization",
        ],
        OpClass.norm,
    ),
    **dict.fromkeys(
        [
            "ReduceMean",
            "ReduceSum",
            "ReduceMax",
            "ReduceMin",
            "ReduceProd",
            "ReduceL1",
            "ReduceL2",
            "ReduceLogSum",
            "ReduceLogSumExp",
            "ReduceSumSquare",
            "ArgMax",
            "ArgMin",
            "Softmax",
            "LogSoftmax",
            "GlobalAveragePool",
            "GlobalMaxPool",
            "GlobalLpPool",
            "MaxPool",
            "AveragePool",
            "LpPool",
            "CumSum",
            "TopK",
        ],
        OpClass.reduction,
    ),
    **dict.fromkeys(
        [
            "Add",
            "Sub",
            "Mul",
            "Div",
            "Pow",
            "Sqrt",
            "Exp",
            "Log",
            "Abs",
            "Neg",
            "Reciprocal",
            "Relu",
            "LeakyRelu",
            "PRelu",
            "Elu",
            "Selu",
            "Celu",
            "Gelu",
            "FastGelu",
            "BiasGelu",
            "QuickGelu",
            "Sigmoid",
            "HardSigmoid",
            "HardSwish",
            "Swish",
            "Mish",
            "Tanh",
            "Erf",
            "Softplus",
            "Softsign",
            "Clip",
            "Min",
            "Max",
            "Sum",
            "Mean",
            "Where",
            "Equal",
            "Less",
            "Greater",
            "LessOrEqual",
            "GreaterOrEqual",
            "Not",
            "And",
            "Or",
            "Xor",
            "Sin",
            "Cos",
            "Floor",
            "Ceil",
            "Round",
            "Sign",
            "IsNaN",
            "IsInf",
            "Mod",
            "QuantizeLinear",
            "DequantizeLinear",
            "DynamicQuantizeLinear",
            "ThresholdedRelu",
            "Shrink",
        ],
        OpClass.elementwise,
    ),
    **dict.fromkeys(
        [
            "Transpose",
            "Concat",
            "Split",
            "Slice",
            "Gather",
            "GatherElements",
            "GatherND",
            "ScatterElements",
            "ScatterND",
            "Scatter",
            "Expand",
            "Tile",
            "Pad",
            "Cast",
            "CastLike",
            "Resize",
            "Upsample",
            "DepthToSpace",
            "SpaceToDepth",
            "ReverseSequence",
            "Trilu",
            "OneHot",
            "NonZero",
            "Range",
            "ConstantOfShape",
            "Compress",
            "EyeLike",
        ],
        OpClass.movement,
    ),
}
VIEWS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"})
"""Views (no copy, no kernel), as torch's reshapes are; Dropout is the identity in inference."""
STATIC = frozenset({"Shape", "Size", "Constant"})
"""Known from the shapes alone: a runtime folds them."""
GATHERS = frozenset({"Gather", "GatherElements", "GatherND"})
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


@dataclass
class Step:
    """One step at one batch size."""

    ops: list[OpCount]
    weights: float
    parameters: int
    activations: float
    unknown: Counter[str] = field(default_factory=Counter)
    """Op types not understood (or whose shapes inference could not give), with their node counts."""


@dataclass(frozen=True)
class OnnxProfile:
    """A profile from an ONNX file, with what a user needs to know about how it was read."""

    profile: Profile
    parameters: int
    activations_per_sample: float
    exported_as: str
    nodes: int
    unknown: dict[str, int]

    def read(self) -> OnnxProfileRead:
        """What the API and the CLI answer."""
        return OnnxProfileRead(
            custom=self.custom(),
            precision=self.profile.precision,
            exported_as=self.exported_as,
            nodes=self.nodes,
            weights_bytes=self.profile.memory.weights,
            unknown_operators=self.unknown,
            made_with=self.profile.made_with,
            fusion=self.profile.fusion,
        )

    def custom(self) -> CustomWorkload:
        """The workload as a recommend or predictions request's ``custom``."""
        p = self.profile
        try:
            return CustomWorkload(
                name=p.workload,
                flops_per_sample=max(p.flops(1), 1.0),
                bytes_per_sample=p.bytes(1),
                parameters=self.parameters,
                operators=max(1, round(p.kernels())),
                buckets=[
                    CustomBucket(
                        op_class=b.op_class,
                        flops_per_sample=b.flops.per_sample,
                        flops_per_step=b.flops.per_step,
                        bytes_per_sample=b.bytes.per_sample,
                        bytes_per_step=b.bytes.per_step,
                        kernels=b.kernels,
                        operators=b.operators,
                    )
                    for b in p.buckets
                ],
                profiled_at=p.precision,
                activation_bytes_per_sample=self.activations_per_sample,
            )
        except ValueError as exc:  # pydantic's bounds: a graph far beyond any real model
            raise InvalidInput(f"the profile is outside a custom workload's bounds: {exc}") from exc


MAX_DIM = 1_000_000


def parse_dims(given: Iterable[str]) -> dict[str, int]:
    """NAME=SIZE items (the API's and the CLI's --dim) as sizes for the graph's symbolic dimensions."""
    dims: dict[str, int] = {}
    for item in given:
        key, _, value = item.partition("=")
        if not key or not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_DIM:
            raise InvalidInput(f"dim {item!r} is not NAME=SIZE with SIZE from 1 to 1,000,000", hint="e.g. sequence=128")
        dims[key] = int(value)
    return dims


def profile(
    data: bytes | ModelProto,
    precision: Precision = Precision.fp32,
    *,
    name: str = "onnx_model",
    dims: Mapping[str, int] | None = None,
    batches: tuple[int, int] = DEFAULT_BATCHES,
) -> OnnxProfile:
    """The inference profile of the ONNX model in ``data`` (a file's bytes) at ``precision``."""
    model = parse(data) if isinstance(data, bytes) else data
    try:
        first, second = (count(concrete(model, batch, dims or {}), precision) for batch in batches)
    except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
        # the file is anyone's: a graph this reading did not foresee is the file's fault, said as such
        raise InvalidInput(
            f"the ONNX graph could not be profiled ({type(exc).__name__}: {exc})",
            hint="check the file with onnx.checker.check_model(model, full_check=True)",
        ) from exc
    unknown = dict(sorted((first.unknown + Counter()).items()))
    how = f"onnx {onnx.__version__} shape inference at batch {batches[0]} and {batches[1]}, every node counted"
    how += f" (app/perfmodel/onnx_profile.py); weights stored as {exported_as(model)}, counted at {precision.value}"
    if unknown:
        listed = ", ".join(f"{op} x{n}" for op, n in unknown.items())
        how += f"; not understood, counted as data movement with bytes only: {listed}"
    activations = linear(first.activations, second.activations, batches)
    result = Profile(
        workload=name,
        task=Task.infer,
        precision=precision,
        shape={k: int(v) for k, v in (dims or {}).items()},
        buckets=buckets(first.ops, second.ops, batches),
        memory=Memory(weights=first.weights, activations=activations),
        batches=batches,
        made_with=how,
        fusion=FUSION,
    )
    return OnnxProfile(
        profile=result,
        parameters=first.parameters,
        activations_per_sample=activations.per_sample,
        exported_as=exported_as(model),
        nodes=len(model.graph.node),
        unknown=unknown,
    )


def count(graph: Graph, precision: Precision) -> Step:
    """Every node of the graph at one batch size."""
    constants = set(graph.constants)
    step = Step(ops=[], weights=0.0, parameters=0, activations=0.0)
    for name in graph.initializers:
        info = graph.tensors[name]
        if info.elem_type in WEIGHT_TYPES:
            step.parameters += info.elements
            step.weights += info.elements * _itemsize(info, precision, None)
    counted: list[NodeProto] = []
    aliases: dict[str, str] = {}
    """A view's output -> the tensor whose storage it shares."""
    for node in graph.nodes:
        inputs = [i for i in node.input if i]
        if node.op_type in STATIC or (inputs and all(i in constants for i in inputs)):
            constants.update(node.output)
            continue
        if node.op_type in VIEWS:
            if inputs and node.output:
                aliases[node.output[0]] = aliases.get(inputs[0], inputs[0])
            continue
        counted.append(node)
        step.ops.append(_op(node, graph, constants, precision, step.unknown))
    step.activations = _peak_live(graph, counted, constants, aliases, precision)
    return step


def _op(node: NodeProto, graph: Graph, constants: set[str], precision: Precision, unknown: Counter[str]) -> OpCount:
    ins = [graph.tensors.get(i) for i in node.input]
    outs = [graph.tensors.get(o) for o in node.output if o]
    op_class = CLASSES.get(node.op_type)
    named = [t for i, t in zip(node.input, ins, strict=True) if i] + outs
    known = op_class is not None and all(t is not None and t.shape is not None for t in named)
    needed = 0 if op_class is None else _inputs_needed(node, op_class)
    complete = len(ins) >= needed and all(t is not None for t in ins[:needed])
    if op_class is None or not known or not complete:
        reason = "shapes not inferred" if complete else "inputs missing"
        unknown[node.op_type if op_class is None else f"{node.op_type} ({reason})"] += 1
        op_class = OpClass.movement
    elif op_class is OpClass.gemm and node.op_type == "MatMul" and not set(node.input) & constants:
        op_class = OpClass.attention
    present = [t for t in ins if t is not None]
    written = [t for t in outs if t is not None]

    def size(t: TensorInfo) -> float:
        return float(t.elements * _itemsize(t, precision, op_class))

    moved = sum(size(t) for t in present) + sum(size(t) for t in written)
    flops = 0.0
    kernels = 0.0 if written and all(t.elements == 0 for t in written) else 1.0
    if known:
        flops = _flops(node, op_class, ins, written)
        if node.op_type in GATHERS and len(present) > 1:
            moved = size(present[1]) + 2 * sum(size(t) for t in written)
        if op_class is OpClass.recurrent:
            extra, kernels = _recurrent_traffic(node, ins, precision)
            moved += extra
    return OpCount(name=node.op_type, op_class=op_class, flops=flops, bytes=moved, kernels=kernels)


INPUTS_NEEDED = {OpClass.conv: 2, OpClass.attention: 2, OpClass.recurrent: 3}
"""The inputs a node of each class must have for its FLOPs to be counted (a convolution's weight, the
keys, a recurrent layer's W and R); one for the rest. A node without them is counted as data movement."""


def _inputs_needed(node: NodeProto, op_class: OpClass) -> int:
    return 4 if node.op_type == "QLinearConv" else INPUTS_NEEDED.get(op_class, 1)


def _flops(node: NodeProto, op_class: OpClass, ins: list[TensorInfo | None], outs: list[TensorInfo]) -> float:
    op = node.op_type
    first = ins[0]
    assert first is not None and first.shape is not None
    out = outs[0] if outs else first
    if op_class is OpClass.conv:
        weight = ins[3] if op == "QLinearConv" else ins[1]
        assert weight is not None and weight.shape is not None
        per = _prod(weight.shape[1:])  # multiply-adds per element: (in / groups) x kernel (transposed: out / groups)
        return 2.0 * (first.elements if op == "ConvTranspose" else out.elements) * per
    if op_class is OpClass.gemm or (op_class is OpClass.attention and op == "MatMul"):
        return 2.0 * out.elements * _inner(node, first.shape)
    if op_class is OpClass.attention:  # QKᵀ over the key positions, then PV
        key = ins[1]
        assert key is not None and key.shape is not None
        keys = key.shape[-2] if len(key.shape) == 4 else key.shape[1]
        return 2.0 * keys * (first.elements + out.elements)
    if op_class is OpClass.recurrent:
        return _recurrent_flops(node, ins)
    if op_class is OpClass.reduction:
        return (SOFTMAX if op.endswith("Softmax") else PER_ELEMENT[op_class]) * first.elements
    return PER_ELEMENT[op_class] * sum(t.elements for t in outs)


def _inner(node: NodeProto, shape: tuple[int, ...]) -> int:
    """K of a matrix product from its first operand (Gemm may transpose it)."""
    if node.op_type in ("Gemm", "QGemm") and any(a.name == "transA" and a.i for a in node.attribute):
        return shape[0]
    return shape[-1]


@dataclass(frozen=True, slots=True)
class _Layer:
    directions: int
    steps: int
    tokens: int
    gates: int
    width: int
    hidden: int


def _layer(node: NodeProto, ins: list[TensorInfo | None]) -> _Layer:
    x, w, r = ins[0], ins[1], ins[2]
    assert x is not None and w is not None and r is not None
    assert x.shape is not None and w.shape is not None and r.shape is not None
    batch_first = any(a.name == "layout" and a.i == 1 for a in node.attribute)
    steps = x.shape[1] if batch_first else x.shape[0]
    return _Layer(
        directions=w.shape[0],
        steps=steps,
        tokens=x.shape[0] * x.shape[1],
        gates=w.shape[1],
        width=w.shape[2],
        hidden=r.shape[2],
    )


def _recurrent_flops(node: NodeProto, ins: list[TensorInfo | None]) -> float:
    layer = _layer(node, ins)
    gemm = 2.0 * layer.gates * (layer.width + layer.hidden)
    return layer.directions * layer.tokens * (gemm + CELL_ELEMENTWISE * layer.hidden)


def _recurrent_traffic(node: NodeProto, ins: list[TensorInfo | None], precision: Precision) -> tuple[float, float]:
    """Bytes beyond reading inputs and writing outputs once, and kernels, as the zoo's LSTM layer."""
    layer = _layer(node, ins)
    item = value_bytes(precision, OpClass.recurrent)
    recurrent = layer.gates * layer.hidden * item  # one direction's R
    extra = layer.directions * ((layer.steps - 1) * recurrent + 2 * layer.gates * layer.tokens * item)
    return float(extra), float(layer.directions * (1 + 2 * layer.steps))


def _peak_live(
    graph: Graph, nodes: list[NodeProto], constants: set[str], aliases: dict[str, str], precision: Precision
) -> float:
    """The peak bytes of activations alive at once, inputs included, running ``nodes`` in order (a
    tensor lives until the last node that reads it or a view of it)."""
    last: dict[str, int] = {}
    for index, node in enumerate(nodes):
        for name in node.input:
            last[aliases.get(name, name)] = index
    for name in graph.outputs:
        last[aliases.get(name, name)] = len(nodes)

    def size(name: str) -> float:
        info = graph.tensors.get(name)
        return float(info.elements * _itemsize(info, precision, None)) if info is not None else 0.0

    live = {name: size(name) for name in graph.inputs}
    peak = sum(live.values())
    for index, node in enumerate(nodes):
        for name in node.output:
            if name and name not in constants:
                live[name] = size(name)
        peak = max(peak, sum(live.values()))
        live = {name: n for name, n in live.items() if last.get(name, -1) > index}
    return peak


def _itemsize(info: TensorInfo, precision: Precision, op_class: OpClass | None) -> int:
    return value_bytes(precision, op_class) if info.is_float else info.itemsize


def _prod(values: tuple[int, ...]) -> int:
    total = 1
    for value in values:
        total *= value
    return total
