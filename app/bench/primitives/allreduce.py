"""All-reduce of a gradient-sized buffer across a config's ``devices`` ranks: collective bandwidth.

What data-parallel training adds to each step is an all-reduce of the gradients, so its bandwidth
bounds how well training scales. The figure is NCCL's "bus bandwidth", comparable across rank
counts: a ring all-reduce moves ``2 (N - 1) / N`` times the buffer through each rank's link, so
bus GB/s = 2 (N - 1) / N x bytes / t. Runs in the ranks of app/bench/data_parallel.py (gloo on
the CPU, NCCL on GPUs); the buffer holds zeros, so repeated sums stay finite.
"""

from __future__ import annotations

from typing import ClassVar

from app.bench.config import BenchConfig
from app.bench.primitives.base import MIB, PreparedPrimitive, Primitive, PrimitiveInfo, primitives
from app.contracts import MachineSpec, Precision


class AllReduce(Primitive):
    collective = True
    size_mb: ClassVar[int]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        reason = super().unsupported(config, machine)
        if reason:
            return reason
        if config.precision is not Precision.fp32:
            return "collective bandwidth is measured once, in fp32 buffers"
        if config.devices < 2:
            return f"{self.info.name} reduces across ranks: set devices=2 or more"
        return None

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        """In a rank whose process group is up; ``config.device`` is this rank's device."""
        import torch
        import torch.distributed as dist

        from app.bench.torch_support import device_sync

        device = torch.device(config.device)
        buffer = torch.zeros(self.size_mb * MIB // 4, device=device)
        ranks = dist.get_world_size()
        sync, timer = device_sync(device)
        bus_bytes = 2.0 * (ranks - 1) / ranks * self.size_mb * MIB
        return PreparedPrimitive(lambda: dist.all_reduce(buffer), sync, timer, bus_bytes, "byte", lambda: None, device)


def _info(mb: int) -> PrimitiveInfo:
    return PrimitiveInfo(
        name=f"allreduce_{mb}mb",
        description=f"all-reduce of a {mb} MiB fp32 buffer across the config's devices (bus bandwidth)",
        precisions=("fp32",),
        unit="GB/s",
    )


@primitives.register
class AllReduce64(AllReduce):
    info, size_mb = _info(64), 64


@primitives.register
class AllReduce256(AllReduce):
    info, size_mb = _info(256), 256
