"""Most samples per second from the whole system (every device asked for)."""

from __future__ import annotations

from app.recommender.objectives import Objective, Scored, objectives
from app.registry import PluginInfo


@objectives.register
class Throughput(Objective):
    info = PluginInfo(name="throughput", description="Most samples per second from all the devices together.")

    @staticmethod
    def key(scored: Scored) -> tuple[float, ...]:
        return (scored.system_throughput,)
