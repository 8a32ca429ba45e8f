"""Memory: total, available, swap."""

from __future__ import annotations

import psutil

from app.contracts import MemoryInfo
from app.probes.base import Probe, ProbeContext, ProbeInfo, probes

MIB = 1024 * 1024


@probes.register
class MemoryProbe(Probe):
    info = ProbeInfo(name="memory", description="memory: total, available, swap", order=20)

    def run(self, ctx: ProbeContext) -> None:
        if ctx.sources.captured:
            ctx.memory = MemoryInfo.model_validate(ctx.captured("memory"))
            return
        vm = psutil.virtual_memory()
        ctx.memory = MemoryInfo(
            total_mb=round(vm.total / MIB, 1),
            available_mb=round(vm.available / MIB, 1),
            swap_total_mb=round(psutil.swap_memory().total / MIB, 1),
        )
