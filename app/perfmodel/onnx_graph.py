"""An ONNX file as a graph whose every tensor has a concrete shape, read without running anything.

The file is parsed from bytes (protobuf only: nothing executes, no path is opened), refused when its
weights live in separate files (external data) or it is over ``MAX_NODES``, and stripped of its large
weights' values (only their shapes matter). Its dynamic batch dimension (the first dimension of the
graph's inputs) and any other symbolic dimension are then set to sizes and ONNX's shape inference
gives every tensor's shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import onnx
from onnx import ModelProto, NodeProto, TensorProto, shape_inference

from app.errors import InvalidInput, LimitError
from app.perfmodel.onnx_fold import fold

MAX_NODES = 50_000
"""Nodes a graph may have, subgraphs included (BERT-large exports with about 1,500)."""
MAX_ELEMENTS = 2**48
"""The most elements one tensor may have: 2^48 at a byte each is 281 TB, beyond any model's tensor; a graph
over it is a mistake (or an attack), and its sizes would overflow the counting's floats."""
KEPT_VALUES = 1024
"""Initializers up to this many elements keep their values (shape constants that Reshape reads)."""
FLOATS = frozenset(
    {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}
    | {TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ}
)
WEIGHT_TYPES = FLOATS | {TensorProto.INT8, TensorProto.UINT8}
"""Initializers of these types are parameters (a quantized model stores 8-bit weights)."""
FOLD_ROUNDS = 8
"""Rounds of shape inference and folding (each folds what the shapes found so far allow)."""
EXTERNAL_HINT = (
    "save it as one file first: onnx.save_model(onnx.load('model.onnx'), 'whole.onnx', save_as_external_data=False)"
)


@dataclass(frozen=True, slots=True)
class TensorInfo:
    shape: tuple[int, ...] | None
    """None: shape inference could not tell."""
    elem_type: int

    @property
    def elements(self) -> int:
        return math.prod(self.shape) if self.shape is not None else 0

    @property
    def itemsize(self) -> int:
        try:
            return int(onnx.helper.tensor_dtype_to_np_dtype(self.elem_type).itemsize)
        except (KeyError, TypeError, ValueError):
            return 4

    @property
    def is_float(self) -> bool:
        return self.elem_type in FLOATS


@dataclass(frozen=True, slots=True)
class Graph:
    """The top-level graph at one batch size: its nodes in order and every tensor's shape."""

    nodes: list[NodeProto]
    tensors: dict[str, TensorInfo]
    initializers: frozenset[str]
    """The file's own (weights and constants)."""
    constants: frozenset[str]
    """Its initializers and the shape arithmetic folded to constants (app/perfmodel/onnx_fold.py)."""
    inputs: list[str]
    outputs: list[str]


def parse(data: bytes) -> ModelProto:
    """The model in ``data``, checked and stripped of its large weights' values."""
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and onnx's own: both mean "not a model"
        raise InvalidInput(f"not an ONNX model: {exc}", hint="give the .onnx file torch.onnx.export wrote") from exc
    if model.ir_version <= 0 or not model.graph.node:
        raise InvalidInput("not an ONNX model: no graph with nodes", hint="give the .onnx file torch.onnx.export wrote")
    nodes = sum(1 for _ in _all_nodes(model.graph))
    if nodes > MAX_NODES:
        raise LimitError(f"the graph has {nodes} nodes, over the {MAX_NODES} this profiles")
    external = [t.name for t in _all_tensors(model) if t.data_location == TensorProto.EXTERNAL]
    if external:
        raise InvalidInput(
            f"its weights are in separate files (external data, {len(external)} tensors such as {external[0]!r}), "
            "which are never read here",
            hint=EXTERNAL_HINT,
        )
    for tensor in model.graph.initializer:
        if math.prod(tensor.dims) > KEPT_VALUES:
            for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
                tensor.ClearField(field)  # type: ignore[arg-type]
    return model


def batch_dims(model: ModelProto) -> tuple[set[str], list[str]]:
    """The symbolic names of the batch dimension, and the graph's other symbolic dimensions."""
    initializers = {t.name for t in model.graph.initializer}
    batch: set[str] = set()
    others: list[str] = []
    fixed: list[str] = []
    for value in model.graph.input:
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        dims = value.type.tensor_type.shape.dim
        for index, dim in enumerate(dims):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                if index == 0:
                    fixed.append(f"{value.name}{[d.dim_value for d in dims]}")
                continue
            name = dim.dim_param or f"{value.name}[{index}]"
            if index == 0:
                batch.add(name)
            elif name not in others:
                others.append(name)
    if not batch:
        raise InvalidInput(
            f"the graph's inputs have no dynamic batch dimension (first dims are fixed: {', '.join(fixed) or 'none'})",
            hint="export with a dynamic first axis, e.g. torch.onnx.export(..., dynamic_axes={'x': {0: 'batch'}})",
        )
    return batch, [name for name in others if name not in batch]


def concrete(model: ModelProto, batch: int, dims: Mapping[str, int]) -> Graph:
    """The graph at ``batch`` with the other symbolic dimensions at ``dims``, shapes inferred."""
    names, others = batch_dims(model)
    missing = [name for name in others if name not in dims]
    if missing:
        raise InvalidInput(
            f"the graph's inputs have symbolic dimensions besides the batch: {', '.join(missing)}",
            hint="give each a size (CLI: --dim NAME=SIZE; API: ?dim=NAME=SIZE), e.g. sequence=128",
        )
    sizes = {**dict(dims), **dict.fromkeys(names, batch)}
    work = ModelProto()
    work.CopyFrom(model)
    initializers = {t.name for t in work.graph.initializer}
    for value in work.graph.input:
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        for index, dim in enumerate(value.type.tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                continue
            size = sizes[dim.dim_param or f"{value.name}[{index}]"]
            dim.Clear()
            dim.dim_value = size
    del work.graph.value_info[:]  # an exporter's symbolic guesses would stay symbolic
    for value in work.graph.output:
        if value.type.HasField("tensor_type"):
            value.type.tensor_type.ClearField("shape")
    for _round in range(FOLD_ROUNDS):
        graph, tensors = _inferred(work)
        shapes = {name: info.shape for name, info in tensors.items() if info.shape is not None}
        if not fold(work, shapes):
            break
    return Graph(
        nodes=list(graph.node),
        tensors=tensors,
        initializers=frozenset(initializers),
        constants=frozenset(t.name for t in graph.initializer),
        inputs=[v.name for v in graph.input if v.name not in initializers],
        outputs=[v.name for v in graph.output],
    )


def _inferred(model: ModelProto) -> tuple[onnx.GraphProto, dict[str, TensorInfo]]:
    try:
        inferred = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as exc:  # onnx raises its own error types for a malformed graph
        raise InvalidInput(f"ONNX shape inference failed: {exc}", hint="check the file with onnx.checker") from exc
    graph = inferred.graph
    tensors: dict[str, TensorInfo] = {}
    for value in [*graph.input, *graph.value_info, *graph.output]:
        if value.type.HasField("tensor_type"):
            tensors[value.name] = _info(value.type.tensor_type)
    for tensor in graph.initializer:
        if any(d < 0 for d in tensor.dims):
            raise InvalidInput(f"the initializer {tensor.name!r} has a negative dimension: {list(tensor.dims)}")
        tensors[tensor.name] = TensorInfo(tuple(int(d) for d in tensor.dims), tensor.data_type)
    for name, info in tensors.items():
        if info.elements > MAX_ELEMENTS:
            raise InvalidInput(
                f"the tensor {name!r} (shape {str(list(info.shape or ()))[:120]}) has over 2^48 elements, "
                "more than any model's tensor",
                hint="check the graph's dimensions and the sizes given with dim",
            )
    return graph, tensors


def exported_as(model: ModelProto) -> str:
    """The element types the file's weights are stored in: 'FLOAT', 'FLOAT16, INT8'."""
    kinds = {t.data_type for t in model.graph.initializer if t.data_type in WEIGHT_TYPES}
    return ", ".join(sorted(TensorProto.DataType.Name(k) for k in kinds)) or "no weights"


def _info(tensor_type: onnx.TypeProto.Tensor) -> TensorInfo:
    if not tensor_type.HasField("shape"):
        return TensorInfo(None, tensor_type.elem_type)
    dims = tensor_type.shape.dim
    if not all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims):
        return TensorInfo(None, tensor_type.elem_type)
    return TensorInfo(tuple(int(d.dim_value) for d in dims), tensor_type.elem_type)


def _all_nodes(graph: onnx.GraphProto) -> Iterator[NodeProto]:
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            for sub in (attribute.g, *attribute.graphs) if attribute.HasField("g") else attribute.graphs:
                yield from _all_nodes(sub)


def _all_tensors(model: ModelProto) -> Iterator[TensorProto]:
    yield from model.graph.initializer
    for sparse in model.graph.sparse_initializer:
        yield sparse.values
    for node in _all_nodes(model.graph):
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
