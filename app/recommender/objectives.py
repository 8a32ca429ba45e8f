"""Ranking strategies: one per objective, registered by name. Higher sort key ranks first."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from app.contracts import Objective
from app.registry import Registry


class Scored(NamedTuple):
    """The figures an objective ranks by, for one feasible candidate (per device unless 'system')."""

    throughput: float
    system_throughput: float
    latency_p99_ms: float | None
    power_w: float | None
    throughput_per_w: float | None
    energy_per_sample_j: float | None
    cost_per_million_usd: float | None


SortKey = Callable[[Scored], tuple[float, ...]]
objectives: Registry[SortKey] = Registry("objective")
MISSING = float("-inf")


def _neg(value: float | None) -> float:
    """Smaller is better: negate; unknown ranks last."""
    return MISSING if value is None else -value


@objectives.register(Objective.throughput.value)
def _throughput(s: Scored) -> tuple[float, ...]:
    return (s.system_throughput,)


@objectives.register(Objective.latency.value)
def _latency(s: Scored) -> tuple[float, ...]:
    return (_neg(s.latency_p99_ms), s.throughput)


@objectives.register(Objective.throughput_per_watt.value)
def _per_watt(s: Scored) -> tuple[float, ...]:
    return (MISSING if s.throughput_per_w is None else s.throughput_per_w, s.throughput)


@objectives.register(Objective.cost_per_million_samples.value)
def _cost(s: Scored) -> tuple[float, ...]:
    return (_neg(s.cost_per_million_usd), s.throughput)


@objectives.register(Objective.energy_per_sample.value)
def _energy(s: Scored) -> tuple[float, ...]:
    return (_neg(s.energy_per_sample_j), s.throughput)


def pareto(points: list[tuple[float, float]]) -> list[bool]:
    """For (throughput, power) pairs: True where no other pair is at least as fast for at most the
    power and strictly better in one of the two (equal pairs share their place)."""
    order = sorted(range(len(points)), key=lambda i: (points[i][1], -points[i][0]))
    front = [False] * len(points)
    best: tuple[float, float] | None = None
    for i in order:
        if best is None or points[i][0] > best[0] or points[i] == best:
            front[i] = True
            best = points[i]
    return front
