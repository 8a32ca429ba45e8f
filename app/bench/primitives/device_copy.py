"""Copy a buffer within one device's memory: read + write bandwidth."""

from __future__ import annotations

from typing import ClassVar

from app.bench.config import BenchConfig
from app.bench.primitives.base import MIB, PreparedPrimitive, Primitive, PrimitiveInfo, primitives
from app.contracts import MachineSpec, Precision


class DeviceCopy(Primitive):
    size_mb: ClassVar[int]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        reason = super().unsupported(config, machine)
        if reason:
            return reason
        if config.precision is not Precision.fp32:
            return "memory bandwidth is measured once, in fp32 buffers"
        return None

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        import torch

        from app.bench.torch_support import device_sync, use_threads

        device = torch.device(config.device)
        use_threads(config, device)
        source = torch.ones(self.size_mb * MIB // 4, device=device)
        target = torch.empty_like(source)
        sync, timer = device_sync(device)
        return PreparedPrimitive(
            lambda: target.copy_(source), sync, timer, 2.0 * self.size_mb * MIB, "byte", lambda: None, device
        )


def _info(mb: int) -> PrimitiveInfo:
    return PrimitiveInfo(
        name=f"copy_{mb}mb", description=f"copy of a {mb} MiB buffer on the device", precisions=("fp32",), unit="GB/s"
    )


@primitives.register
class Copy64(DeviceCopy):
    info, size_mb = _info(64), 64


@primitives.register
class Copy256(DeviceCopy):
    info, size_mb = _info(256), 256


@primitives.register
class Copy1024(DeviceCopy):
    info, size_mb = _info(1024), 1024
