"""Operators counted at two batch sizes become lines and buckets; int8 follows its written rule."""

from __future__ import annotations

import pytest

from app.errors import InvalidInput
from app.perfmodel.operators import NO_FLOPS, OpCount, buckets, int8_from_bf16, intensity_bin, linear
from app.perfmodel.profile import Linear, OpClass

BATCHES = (2, 4)


def test_a_line_through_two_batches() -> None:
    line = linear(10 + 2 * 3, 10 + 4 * 3, BATCHES)
    assert (line.per_sample, line.per_step) == (3, 10)
    assert linear(5.0, 5.0 - 1e-12, BATCHES).per_sample == 0  # rounding noise is clipped, not an error


def test_a_quantity_that_falls_with_the_batch_is_refused() -> None:
    with pytest.raises(InvalidInput, match="fell"):
        linear(10.0, 5.0, BATCHES)


def test_operators_of_a_class_and_intensity_share_a_bucket() -> None:
    def op(name: str, cls: OpClass, flops: float, moved: float, kernels: float = 1) -> OpCount:
        return OpCount(name, cls, flops, moved, kernels)

    first = [op("mm", OpClass.gemm, 2000, 20), op("mm", OpClass.gemm, 4000, 40), op("add", OpClass.elementwise, 8, 96)]
    first.append(op("copy_", OpClass.movement, 0, 64))
    second = [
        op("mm", OpClass.gemm, 4000, 40),
        op("mm", OpClass.gemm, 8000, 80),
        op("add", OpClass.elementwise, 16, 192),
    ]
    second.append(op("copy_", OpClass.movement, 0, 128))
    made = buckets(first, second, BATCHES)
    assert [(b.op_class, b.operators, b.kernels) for b in made] == [
        (OpClass.gemm, 2, 2),
        (OpClass.elementwise, 1, 1),
        (OpClass.movement, 1, 1),
    ]
    assert made[0].flops == Linear(per_sample=3000, per_step=0)
    assert intensity_bin(made[2].flops, made[2].bytes) == NO_FLOPS


def test_different_operators_at_the_two_batches_are_refused() -> None:
    a = [OpCount("mm", OpClass.gemm, 1, 1, 1)]
    b = [OpCount("bmm", OpClass.gemm, 2, 2, 1)]
    with pytest.raises(InvalidInput, match="operator 0 is mm"):
        buckets(a, b, BATCHES)
    with pytest.raises(InvalidInput, match="ran 1 operators"):
        buckets(a, a + a, BATCHES)


def test_int8_halves_matrix_operands_and_drops_weight_casts() -> None:
    ops = [
        OpCount("_to_copy", OpClass.movement, 0, 300, 1, weight_cast=True),
        OpCount("convolution", OpClass.conv, 1000, 100, 1),
        OpCount("relu", OpClass.elementwise, 10, 40, 1),
    ]
    assert int8_from_bf16(ops) == [
        OpCount("convolution", OpClass.conv, 1000, 50, 1),
        OpCount("relu", OpClass.elementwise, 10, 40, 1),
    ]
