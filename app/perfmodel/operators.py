"""From operators counted at two batch sizes to a profile's buckets: the part every profiler shares.

A profiler (app/bench/profiling.py over torch, app/perfmodel/onnx_profile.py over an ONNX graph)
lists the operators of one step, in order, at two batch sizes. The two lists hold the same operators;
each operator's FLOPs and bytes are solved for ``per_sample * batch + per_step``, then operators of
one class and a similar arithmetic intensity are summed into a bucket. Pure Python: no torch here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from app.errors import InvalidInput
from app.perfmodel.profile import TENSOR_CLASSES, Bucket, Linear, OpClass

INTENSITY_BATCH = 32
"""The batch at which an operator's arithmetic intensity (FLOPs per byte) picks its bucket."""

NO_FLOPS = -99
"""The intensity bin of operators that only move data."""

PER_ELEMENT = {
    OpClass.elementwise: 1.0,
    OpClass.norm: 5.0,
    OpClass.reduction: 1.0,
    OpClass.movement: 0.0,
    OpClass.optimizer: 1.0,
}
"""FLOPs per output element (reductions: per input element) of operators without a formula. An
activation or arithmetic op counts 1 whatever it computes (exp, tanh: the kernel is memory-bound
either way); a normalisation 5 (mean, variance, normalise, scale, shift), its backward ``NORM_BACKWARD``;
softmax ``SOFTMAX`` (max, subtract, exp, sum, divide)."""
NORM_BACKWARD = 8.0
NORM_INFERENCE = 2.0
"""A batch norm in eval mode uses its running statistics: a scale and shift per channel, 2 FLOPs
per element, no statistics to compute."""
SOFTMAX = 5.0
CELL_ELEMENTWISE = 16.0
"""FLOPs per hidden unit and step of an LSTM cell besides its GEMMs (bias adds, 3 sigmoids, 2 tanh,
the state update)."""


@dataclass(frozen=True, slots=True)
class OpCount:
    """One operator of a step at one batch size."""

    name: str
    op_class: OpClass
    flops: float
    bytes: float
    kernels: float
    weight_cast: bool = False
    """A copy of a weight into the compute precision (autocast does one per weight and step)."""
    called: bool = True
    """Python called it: False for a kernel the dispatcher launched inside another operator's call
    (autocast's casts), which the host pays a launch for, not a dispatch."""


def linear(first: float, second: float, batches: tuple[int, int]) -> Linear:
    """The line through two measurements; a tiny negative coefficient (rounding) is clipped to 0."""
    b1, b2 = batches
    per_sample = (second - first) / (b2 - b1)
    per_step = first - b1 * per_sample
    scale = max(abs(first), abs(second), 1.0)
    if per_sample < -1e-6 * scale or per_step < -1e-6 * scale:
        raise InvalidInput(
            f"a quantity fell as the batch grew ({first:g} at batch {b1}, {second:g} at batch {b2})",
            hint="profile at two batch sizes that run the same operators",
        )
    return Linear(per_sample=max(per_sample, 0.0), per_step=max(per_step, 0.0))


def intensity_bin(flops: Linear, moved: Linear) -> int:
    """round(log2(FLOPs per byte)) at INTENSITY_BATCH; NO_FLOPS for pure data movement."""
    f, b = flops.at(INTENSITY_BATCH), moved.at(INTENSITY_BATCH)
    if f <= 0 or b <= 0:
        return NO_FLOPS
    return round(math.log2(f / b))


def buckets(first: Sequence[OpCount], second: Sequence[OpCount], batches: tuple[int, int]) -> list[Bucket]:
    """The buckets of a step counted at ``batches[0]`` (``first``) and ``batches[1]`` (``second``)."""
    if batches[0] == batches[1]:
        raise InvalidInput(f"two different batch sizes are needed, got {batches}")
    if len(first) != len(second):
        raise InvalidInput(
            f"the step ran {len(first)} operators at batch {batches[0]} but {len(second)} at batch {batches[1]}",
            hint="a profile needs a model whose operators do not depend on the batch size",
        )
    sums: dict[tuple[OpClass, int], tuple[Linear, Linear, float, int]] = {}
    for index, (a, b) in enumerate(zip(first, second, strict=True)):
        if (a.name, a.op_class) != (b.name, b.op_class):
            raise InvalidInput(
                f"operator {index} is {a.name} at batch {batches[0]} but {b.name} at batch {batches[1]}",
                hint="a profile needs a model whose operators do not depend on the batch size",
            )
        flops, moved = linear(a.flops, b.flops, batches), linear(a.bytes, b.bytes, batches)
        key = (a.op_class, intensity_bin(flops, moved))
        f0, m0, k0, n0 = sums.get(key, (Linear(), Linear(), 0.0, 0))
        sums[key] = (_add(f0, flops), _add(m0, moved), k0 + max(a.kernels, b.kernels), n0 + int(a.called))
    order = list(OpClass)
    return [
        Bucket(op_class=cls, flops=f, bytes=m, kernels=k, operators=n)
        for (cls, _bin), (f, m, k, n) in sorted(sums.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1]))
    ]


def int8_from_bf16(ops: Iterable[OpCount]) -> list[OpCount]:
    """An int8 inference step from its bf16 one, by rule (eager torch cannot run int8): the classes
    that run on matrix units (convolutions, GEMMs, attention, recurrent layers) read and write 1-byte
    operands instead of 2 (bytes halved, FLOPs the same); the per-step casts of fp32 weights to bf16
    disappear (a quantized model stores int8 weights); everything else stays as in bf16."""
    return [
        replace(op, bytes=op.bytes / 2) if op.op_class in TENSOR_CLASSES else op for op in ops if not op.weight_cast
    ]


def _add(a: Linear, b: Linear) -> Linear:
    return Linear(per_sample=a.per_sample + b.per_sample, per_step=a.per_step + b.per_step)
