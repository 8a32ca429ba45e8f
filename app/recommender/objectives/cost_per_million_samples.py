"""Lowest cost of a million samples: the price spread over its life plus the electricity."""

from __future__ import annotations

from app.recommender.objectives import Objective, Scored, objectives, smaller_is_better
from app.registry import PluginInfo


@objectives.register
class CostPerMillionSamples(Objective):
    info = PluginInfo(
        name="cost_per_million_samples",
        description="Lowest cost per million samples: price over amortisation_years plus electricity.",
    )

    @staticmethod
    def key(scored: Scored) -> tuple[float, ...]:
        return (smaller_is_better(scored.cost_per_million_usd), scored.throughput)
