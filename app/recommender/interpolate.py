"""Between measured points of one curve: throughput over batch size (or thread count).

Measured throughput is noisy, and a curve that dips between two batch sizes is noise, not
physics, so the points are first made non-decreasing (pool-adjacent-violators, weighted equally),
then read off piecewise-linearly in log2 of the batch size. Nothing is extrapolated: outside the
measured range there is no interpolated estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Interpolated:
    value: float
    low_x: float
    high_x: float
    low_value: float
    high_value: float

    @property
    def gap_pct(self) -> float:
        """How far apart the two neighbours are, percent of the value: the room a wrong curve has."""
        return abs(self.high_value - self.low_value) / self.value * 100 if self.value else 0.0


def non_decreasing(values: Sequence[float]) -> list[float]:
    """The least-squares non-decreasing fit of ``values`` (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [sum, count]
    for value in values:
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    fitted: list[float] = []
    for total, count in blocks:
        fitted.extend([total / count] * int(count))
    return fitted


def interpolate(points: Sequence[tuple[float, float]], x: float, *, monotone: bool = True) -> Interpolated | None:
    """The value at ``x`` from (x, value) points, or None outside their range or with fewer than two."""
    ordered = sorted(points)
    if len(ordered) < 2 or not ordered[0][0] <= x <= ordered[-1][0]:
        return None
    xs = [p[0] for p in ordered]
    ys = non_decreasing([p[1] for p in ordered]) if monotone else [p[1] for p in ordered]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys, strict=True), zip(xs[1:], ys[1:], strict=True), strict=False):
        if x0 <= x <= x1:
            if x1 == x0:
                return Interpolated(y0, x0, x1, y0, y1)
            share = (math.log2(x) - math.log2(x0)) / (math.log2(x1) - math.log2(x0))
            return Interpolated(y0 + share * (y1 - y0), x0, x1, y0, y1)
    return None
