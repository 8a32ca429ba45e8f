"""Most samples per second per watt; unknown power ranks last."""

from __future__ import annotations

from app.recommender.objectives import MISSING, Objective, Scored, objectives
from app.registry import PluginInfo


@objectives.register
class ThroughputPerWatt(Objective):
    info = PluginInfo(
        name="throughput_per_watt", description="Most samples per second per watt; unknown power ranks last."
    )

    @staticmethod
    def key(scored: Scored) -> tuple[float, ...]:
        return (MISSING if scored.throughput_per_w is None else scored.throughput_per_w, scored.throughput)
