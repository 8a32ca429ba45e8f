"""Host -> device or device -> host transfer from pinned or pageable host memory."""

from __future__ import annotations

from typing import ClassVar

from app.bench.config import BenchConfig
from app.bench.primitives.base import MIB, PreparedPrimitive, Primitive, PrimitiveInfo, primitives
from app.contracts import MachineSpec, Precision

SIZE_MB = 256


class HostDeviceCopy(Primitive):
    to_device: ClassVar[bool]
    pinned: ClassVar[bool]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.device == "cpu":
            return "host<->device copies need a GPU device"
        if config.precision is not Precision.fp32:
            return "copies are measured once, in fp32 buffers"
        return super().unsupported(config, machine)

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        import torch

        from app.bench.torch_support import device_sync

        device = torch.device(config.device)
        elements = SIZE_MB * MIB // 4
        host = torch.ones(elements, pin_memory=self.pinned)
        on_device = torch.empty(elements, device=device)
        if self.to_device:

            def step() -> object:
                return on_device.copy_(host, non_blocking=self.pinned)

        else:

            def step() -> object:
                return host.copy_(on_device, non_blocking=self.pinned)

        sync, timer = device_sync(device)
        return PreparedPrimitive(step, sync, timer, float(SIZE_MB * MIB), "byte", lambda: None, device)


def _info(direction: str, memory: str) -> PrimitiveInfo:
    words = "host to device" if direction == "h2d" else "device to host"
    return PrimitiveInfo(
        name=f"{direction}_{memory}_{SIZE_MB}mb",
        description=f"{SIZE_MB} MiB {words}, {memory} host memory",
        precisions=("fp32",),
        unit="GB/s",
    )


@primitives.register
class HostToDevicePinned(HostDeviceCopy):
    info, to_device, pinned = _info("h2d", "pinned"), True, True


@primitives.register
class HostToDevicePageable(HostDeviceCopy):
    info, to_device, pinned = _info("h2d", "pageable"), True, False


@primitives.register
class DeviceToHostPinned(HostDeviceCopy):
    info, to_device, pinned = _info("d2h", "pinned"), False, True


@primitives.register
class DeviceToHostPageable(HostDeviceCopy):
    info, to_device, pinned = _info("d2h", "pageable"), False, False
