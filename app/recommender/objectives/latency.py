"""Lowest p99 latency per batch; ties go to the faster."""

from __future__ import annotations

from app.recommender.objectives import Objective, Scored, objectives, smaller_is_better
from app.registry import PluginInfo


@objectives.register
class Latency(Objective):
    info = PluginInfo(name="latency", description="Lowest p99 latency at the batch size; ties go to the faster.")

    @staticmethod
    def key(scored: Scored) -> tuple[float, ...]:
        return (smaller_is_better(scored.latency_p99_ms), scored.throughput)
