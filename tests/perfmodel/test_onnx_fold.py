"""Folding an untrusted graph's shape arithmetic never computes a tensor bigger than it may keep."""

from __future__ import annotations

import tracemalloc

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from app.perfmodel import onnx_fold


def _model(nodes: list[NodeProto], initializers: list[TensorProto]) -> ModelProto:
    out = helper.make_tensor_value_info("out", TensorProto.INT64, None)
    graph = helper.make_graph(nodes, "g", [], [out], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _scalar(name: str, value: int) -> TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=np.int64), name)


def _peak_bytes(model: ModelProto) -> tuple[int, int]:
    tracemalloc.start()
    folded = onnx_fold.fold(model, {})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return folded, peak


def test_a_small_range_is_folded() -> None:
    model = _model(
        [helper.make_node("Range", ["a", "b", "c"], ["out"])], [_scalar("a", 0), _scalar("b", 8), _scalar("c", 1)]
    )
    assert onnx_fold.fold(model, {}) == 1
    assert [t.name for t in model.graph.initializer][-1] == "out"


def test_a_huge_range_is_left_alone_without_being_computed() -> None:
    model = _model(
        [helper.make_node("Range", ["a", "b", "c"], ["out"])],
        [_scalar("a", 0), _scalar("b", 2**27), _scalar("c", 1)],
    )
    folded, peak = _peak_bytes(model)
    assert folded == 0
    assert peak < 10 * 2**20, "2**27 int64s (1 GiB) must not be made only to be refused"


def test_broadcasting_three_small_vectors_into_a_huge_tensor_is_left_alone() -> None:
    shapes = [(onnx_fold.LIMIT, 1, 1), (1, onnx_fold.LIMIT, 1), (1, 1, onnx_fold.LIMIT)]
    values = [np.ones(s, dtype=np.int64) for s in shapes]
    initializers = [numpy_helper.from_array(v.astype(bool) if i == 0 else v, f"x{i}") for i, v in enumerate(values)]
    model = _model([helper.make_node("Where", ["x0", "x1", "x2"], ["out"])], initializers)
    folded, peak = _peak_bytes(model)
    assert folded == 0
    assert peak < 10 * 2**20


def test_a_range_with_a_zero_step_is_left_alone() -> None:
    model = _model(
        [helper.make_node("Range", ["a", "b", "c"], ["out"])], [_scalar("a", 0), _scalar("b", 8), _scalar("c", 0)]
    )
    assert onnx_fold.fold(model, {}) == 0
