"""Most samples per second at the low end of each figure's band: a procurement's conservative order."""

from __future__ import annotations

from app.recommender.objectives import Objective, Scored, objectives
from app.registry import PluginInfo


@objectives.register
class AssuredThroughput(Objective):
    info = PluginInfo(
        name="assured_throughput",
        description="Most samples per second from all the devices together at the low end of each figure's 90% "
        "band: a measured part ranks above a modelled one whose wider band leaves it less sure to be faster.",
    )

    @staticmethod
    def key(scored: Scored) -> tuple[float, ...]:
        return (scored.assured_throughput,)
