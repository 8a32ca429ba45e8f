"""Hardware ceilings: GEMM FLOP/s per precision, memory bandwidth, host<->device copies.

A primitive's workload name carries its size (``gemm_2048``, ``copy_256mb``, ``h2d_pinned_256mb``)
so results of different sizes never mix. Each one reports its own figure of merit: a GEMM's
achieved TFLOP/s is 2 n^3 / t; a copy's bandwidth counts bytes read plus bytes written for a
device copy and bytes moved for a host<->device transfer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import torch

from app.bench.config import BenchConfig
from app.bench.precision import cpu_unsupported, cuda_unsupported
from app.bench.runtimes.torch_runtime import cuda_event_timer, device_of, tensor_float32
from app.contracts import MachineSpec, Precision
from app.registry import Registry

MIB = 1024 * 1024
GEMM_DTYPES = {
    Precision.fp32: torch.float32,
    Precision.tf32: torch.float32,
    Precision.bf16: torch.bfloat16,
    Precision.fp16: torch.float16,
}


@dataclass
class PreparedPrimitive:
    step: Callable[[], object]
    sync: Callable[[], None] | None
    timer: Callable[..., float] | None
    work: float
    """FLOP (for a GEMM) or bytes (for a copy) one step does."""
    unit: str
    close: Callable[[], None]
    device: torch.device

    def peak_device_memory_mb(self) -> float | None:
        return torch.cuda.max_memory_allocated(self.device) / MIB if self.device.type == "cuda" else None


class Primitive(ABC):
    NAME: ClassVar[str]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        device = device_of(machine, config.device)
        if device is None:
            return f"this machine has no device {config.device}"
        if config.device != "cpu" and not torch.cuda.is_available():
            return f"this torch ({torch.__version__}) cannot use CUDA"
        return None

    @abstractmethod
    def prepare(self, config: BenchConfig) -> PreparedPrimitive: ...


def _device_sync(device: torch.device) -> tuple[Callable[[], None] | None, Callable[..., float] | None]:
    """The sync and timer for a device; on a GPU the peak-memory count also starts here, after the
    buffers are allocated, so a primitive's peak is its own and not an earlier config's."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return (lambda: torch.cuda.synchronize(device)), cuda_event_timer(device)
    return None, None


class Gemm(Primitive):
    """C = A @ B with n x n matrices; int8 through torch._int_mm (CUDA only)."""

    n: ClassVar[int]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        reason = super().unsupported(config, machine)
        if reason:
            return reason
        if config.device == "cpu":
            if config.precision is Precision.int8:
                return "int8 GEMM is measured on CUDA (torch._int_mm); the CPU has no such kernel in torch"
            return cpu_unsupported(config.precision, machine.cpu)
        return cuda_unsupported(config.precision, device_of(machine, config.device))

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        device = torch.device(config.device)
        if config.threads and device.type == "cpu":
            torch.set_num_threads(config.threads)
        generator = torch.Generator(device="cpu").manual_seed(0)
        if config.precision is Precision.int8:
            a = torch.randint(-128, 127, (self.n, self.n), dtype=torch.int8, generator=generator).to(device)
            b = torch.randint(-128, 127, (self.n, self.n), dtype=torch.int8, generator=generator).to(device)

            def step() -> object:
                return torch._int_mm(a, b)

        else:
            dtype = GEMM_DTYPES[config.precision]
            a = torch.randn(self.n, self.n, generator=generator).to(device=device, dtype=dtype)
            b = torch.randn(self.n, self.n, generator=generator).to(device=device, dtype=dtype)

            def step() -> object:
                return a @ b

        tf32 = tensor_float32(config.precision is Precision.tf32)
        tf32.__enter__()

        def close() -> None:
            tf32.__exit__(None, None, None)

        sync, timer = _device_sync(device)
        return PreparedPrimitive(step, sync, timer, 2.0 * self.n**3, "flop", close, device)


class DeviceCopy(Primitive):
    """Copy a buffer within one device's memory: read + write bandwidth."""

    size_mb: ClassVar[int]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        reason = super().unsupported(config, machine)
        if reason:
            return reason
        if config.precision is not Precision.fp32:
            return "memory bandwidth is measured once, in fp32 buffers"
        return None

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        device = torch.device(config.device)
        if config.threads and device.type == "cpu":
            torch.set_num_threads(config.threads)
        elements = self.size_mb * MIB // 4
        source = torch.ones(elements, device=device)
        target = torch.empty_like(source)
        sync, timer = _device_sync(device)
        return PreparedPrimitive(
            lambda: target.copy_(source), sync, timer, 2.0 * self.size_mb * MIB, "byte", lambda: None, device
        )


class HostDeviceCopy(Primitive):
    """Host -> device or device -> host transfer from pinned or pageable host memory."""

    size_mb: ClassVar[int]
    to_device: ClassVar[bool]
    pinned: ClassVar[bool]

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.device == "cpu":
            return "host<->device copies need a GPU device"
        if config.precision is not Precision.fp32:
            return "copies are measured once, in fp32 buffers"
        return super().unsupported(config, machine)

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        device = torch.device(config.device)
        elements = self.size_mb * MIB // 4
        host = torch.ones(elements, pin_memory=self.pinned)
        on_device = torch.empty(elements, device=device)
        if self.to_device:

            def step() -> object:
                return on_device.copy_(host, non_blocking=self.pinned)

        else:

            def step() -> object:
                return host.copy_(on_device, non_blocking=self.pinned)

        sync, timer = _device_sync(device)
        return PreparedPrimitive(step, sync, timer, float(self.size_mb * MIB), "byte", lambda: None, device)


primitives: Registry[type[Primitive]] = Registry("primitive")


def _register() -> None:
    for n in (1024, 2048, 4096, 8192):
        primitives.add(f"gemm_{n}", type(f"Gemm{n}", (Gemm,), {"NAME": f"gemm_{n}", "n": n}))
    for mb in (64, 256, 1024):
        primitives.add(f"copy_{mb}mb", type(f"Copy{mb}", (DeviceCopy,), {"NAME": f"copy_{mb}mb", "size_mb": mb}))
    for direction, to_device in (("h2d", True), ("d2h", False)):
        for memory, pinned in (("pinned", True), ("pageable", False)):
            name = f"{direction}_{memory}_256mb"
            attrs = {"NAME": name, "size_mb": 256, "to_device": to_device, "pinned": pinned}
            primitives.add(name, type(name, (HostDeviceCopy,), attrs))


_register()
