"""What the recommender ranks by: one module per objective, each an ``Objective`` registered with
``@objectives.register``; adding an objective is adding one module here. Higher keys rank first.

``Scored`` holds the figures every objective may rank by. Ranking calls ``key`` once, with columns:
each field a numpy array over every feasible candidate, NaN where a figure is unknown (None for one
candidate). A key written with arithmetic and ``smaller_is_better`` works on both; a NaN in a key
ranks last, as ``MISSING`` does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

from app.errors import InvalidInput
from app.registry import PluginInfo, Registry


class Scored(NamedTuple):
    """The figures an objective ranks by, for one feasible candidate (per device unless 'system')."""

    throughput: float
    system_throughput: float
    assured_throughput: float
    """The system's samples/s at the low end of each device's band (``Guess.throughput_low``): what the
    estimate's 90% band says is reached."""
    latency_p99_ms: float | None
    power_w: float | None
    throughput_per_w: float | None
    energy_per_sample_j: float | None
    cost_per_million_usd: float | None


class Objective(ABC):
    info: ClassVar[PluginInfo]

    @staticmethod
    @abstractmethod
    def key(scored: Scored) -> tuple[float, ...]:
        """The sort key: higher ranks first."""


objectives: Registry[type[Objective]] = Registry("objective", package="app.recommender.objectives")
MISSING = float("-inf")
"""The key of a figure nobody knows: it ranks last."""


def smaller_is_better(value: float | None) -> float:
    """A figure where less is better, as a key: negated; unknown ranks last."""
    return MISSING if value is None else -value


def objective(name: str) -> type[Objective]:
    """The named objective; an unknown name is invalid input (422) that lists the objectives there are."""
    if name not in objectives:
        raise InvalidInput(f"unknown objective {name!r}", hint=f"available: {', '.join(objectives.names())}")
    return objectives.get(name)
