"""Fewest joules per sample."""

from __future__ import annotations

from app.recommender.objectives import Objective, Scored, objectives, smaller_is_better
from app.registry import PluginInfo


@objectives.register
class EnergyPerSample(Objective):
    info = PluginInfo(name="energy_per_sample", description="Fewest joules per sample; unknown power ranks last.")

    @staticmethod
    def key(scored: Scored) -> tuple[float, ...]:
        return (smaller_is_better(scored.energy_per_sample_j), scored.throughput)
