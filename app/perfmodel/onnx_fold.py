"""Shape arithmetic of an ONNX graph folded to constants, so that shape inference can go on.

An exported model computes some shapes at run time (``x.size(1)`` becomes Shape -> Gather -> Cast ->
Range ...); ONNX's own data propagation stops at some of those operators, and every tensor after
them would have no shape. Here the small integer computations whose inputs are known are done with
numpy, a whitelist of operators on tensors of at most ``LIMIT`` elements: the model itself is never run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from onnx import AttributeProto, ModelProto, NodeProto, helper, numpy_helper

LIMIT = 1024
"""Elements a folded tensor may have (shapes, index ranges)."""

Array = np.ndarray[Any, Any]


def _attr(node: NodeProto, name: str, default: Any = None) -> Any:
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _axes(node: NodeProto, args: Sequence[Array]) -> list[int]:
    given = args[1] if len(args) > 1 else _attr(node, "axes", [])
    return [int(a) for a in np.asarray(given).reshape(-1)]


def _shape(node: NodeProto, args: Sequence[Array]) -> Array:
    dims = np.asarray(args[0].shape, dtype=np.int64)
    start, end = _attr(node, "start", 0), _attr(node, "end", None)
    return dims[start:end]


def _unsqueeze(node: NodeProto, args: Sequence[Array]) -> Array:
    out = args[0]
    rank = out.ndim + len(_axes(node, args))
    for axis in sorted(a % rank for a in _axes(node, args)):
        out = np.expand_dims(out, axis)
    return out


def _squeeze(node: NodeProto, args: Sequence[Array]) -> Array:
    axes = _axes(node, args)
    return np.squeeze(args[0], axis=tuple(axes)) if axes else np.squeeze(args[0])


def _slice(node: NodeProto, args: Sequence[Array]) -> Array:
    data, starts, ends = args[0], args[1].reshape(-1), args[2].reshape(-1)
    axes = args[3].reshape(-1) if len(args) > 3 else np.arange(len(starts))
    steps = args[4].reshape(-1) if len(args) > 4 else np.ones(len(starts), dtype=np.int64)
    index = [slice(None)] * data.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        index[int(axis)] = slice(int(start), int(end), int(step))
    return data[tuple(index)]


def _divide(node: NodeProto, args: Sequence[Array]) -> Array:
    a, b = args
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)  # type: ignore[no-any-return]
    return np.divide(a, b)


def _constant(node: NodeProto, args: Sequence[Array]) -> Array:
    attribute = node.attribute[0]
    if attribute.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(attribute.t)
    return np.asarray(helper.get_attribute_value(attribute))


def _constant_of_shape(node: NodeProto, args: Sequence[Array]) -> Array:
    value = _attr(node, "value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, dtype=np.float32)
    shape = [int(d) for d in args[0].reshape(-1)]
    if int(np.prod(shape)) > LIMIT:
        raise ValueError("too large to fold")
    return np.full(shape, fill[0], dtype=fill.dtype)


FOLD: dict[str, Callable[[NodeProto, Sequence[Array]], Array]] = {
    "Constant": _constant,
    "Shape": _shape,
    "Size": lambda node, args: np.asarray(args[0].size, dtype=np.int64),
    "Gather": lambda node, args: np.take(args[0], args[1], axis=_attr(node, "axis", 0)),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Concat": lambda node, args: np.concatenate([np.atleast_1d(a) for a in args], _attr(node, "axis")),
    "Cast": lambda node, args: args[0].astype(helper.tensor_dtype_to_np_dtype(_attr(node, "to"))),
    "Slice": _slice,
    "Add": lambda node, args: np.add(args[0], args[1]),
    "Sub": lambda node, args: np.subtract(args[0], args[1]),
    "Mul": lambda node, args: np.multiply(args[0], args[1]),
    "Div": _divide,
    "Neg": lambda node, args: np.negative(args[0]),
    "Equal": lambda node, args: np.equal(args[0], args[1]),
    "Less": lambda node, args: np.less(args[0], args[1]),
    "Greater": lambda node, args: np.greater(args[0], args[1]),
    "Not": lambda node, args: np.logical_not(args[0]),
    "Where": lambda node, args: np.where(args[0], args[1], args[2]),
    "Min": lambda node, args: np.minimum.reduce(list(args)),
    "Max": lambda node, args: np.maximum.reduce(list(args)),
    "Floor": lambda node, args: np.floor(args[0]),
    "Ceil": lambda node, args: np.ceil(args[0]),
    "Sqrt": lambda node, args: np.sqrt(args[0]),
    "Range": lambda node, args: np.arange(args[0].item(), args[1].item(), args[2].item(), dtype=args[0].dtype),
    "Reshape": lambda node, args: args[0].reshape([int(d) for d in args[1].reshape(-1)]),
    "Identity": lambda node, args: args[0],
    "Transpose": lambda node, args: np.transpose(args[0], _attr(node, "perm")),
    "ReduceProd": lambda node, args: np.prod(args[0], keepdims=bool(_attr(node, "keepdims", 1))),
    "ConstantOfShape": _constant_of_shape,
}


BROADCASTING = frozenset({"Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "Where", "Min", "Max"})


def _size(node: NodeProto, args: Sequence[Array]) -> int:
    """How many elements ``node``'s output will have, known before it is computed: a file is
    untrusted, and a Range to 2**31 or three broadcast vectors of ``LIMIT`` elements would take
    gigabytes to compute only to be thrown away."""
    op = node.op_type
    if op == "Range":
        start, limit, delta = (float(a.item()) for a in args)
        return max(0, math.ceil((limit - start) / delta))
    if op in BROADCASTING:
        return math.prod(np.broadcast_shapes(*(a.shape for a in args)))
    if op == "Gather":
        data, indices = args
        axis = _attr(node, "axis", 0)
        return int(indices.size * (data.size // max(1, data.shape[axis])))
    if op == "Concat":
        return sum(a.size for a in args)
    if op == "Shape":
        return args[0].ndim
    return max((a.size for a in args), default=1)  # the others never grow their input


def fold(model: ModelProto, shapes: dict[str, tuple[int, ...]]) -> int:
    """Replaces the nodes whose outputs can be computed by initializers holding them; ``shapes``
    are the tensor shapes inference knows (what Shape reads). Returns how many nodes were folded."""
    graph = model.graph
    values: dict[str, Array] = {}
    for tensor in graph.initializer:
        has_values = tensor.raw_data or tensor.int64_data or tensor.int32_data or tensor.float_data
        if has_values and int(np.prod(tensor.dims)) <= LIMIT:
            values[tensor.name] = numpy_helper.to_array(tensor)
    folded: list[NodeProto] = []
    for node in graph.node:
        if node.op_type not in FOLD or len(node.output) != 1:
            continue
        inputs = list(node.input)
        if node.op_type == "Shape":
            if inputs[0] not in shapes:
                continue
            args = [np.broadcast_to(np.zeros((), dtype=np.int8), shapes[inputs[0]])]  # a shape, no memory
        elif all(i == "" or i in values for i in inputs):
            args = [values[i] for i in inputs if i]
        else:
            continue
        try:
            if _size(node, args) > LIMIT:
                continue
            out = np.asarray(FOLD[node.op_type](node, args))
        except Exception:
            continue
        if out.size > LIMIT:
            continue
        values[node.output[0]] = out
        folded.append(node)
    for node in folded:
        graph.node.remove(node)
        graph.initializer.append(numpy_helper.from_array(values[node.output[0]], node.output[0]))
    return len(folded)
