"""Hardware ceilings: GEMM FLOP/s per precision, memory bandwidth, host<->device copies.

A primitive's workload name carries its size (``gemm_2048``, ``copy_256mb``, ``h2d_pinned_256mb``)
so results of different sizes never mix; each size is its own registered class. Each one reports
its own figure of merit: a GEMM's achieved TFLOP/s is 2 n^3 / t; a copy's bandwidth counts bytes
read plus bytes written for a device copy and bytes moved for a host<->device transfer.
Modules here import torch inside methods only (see app/registry.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from app.bench.config import BenchConfig
from app.bench.measure import TimerFn
from app.bench.needs import TORCH
from app.contracts import MachineSpec
from app.registry import Need, PluginInfo, Registry

if TYPE_CHECKING:
    import torch

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class PrimitiveInfo(PluginInfo):
    unit: str
    """The figure of merit: 'TFLOP/s' or 'GB/s'."""
    needs: tuple[Need, ...] = (TORCH,)

    def details(self) -> dict[str, Any]:
        return {"unit": self.unit}


@dataclass
class PreparedPrimitive:
    step: Callable[[], object]
    sync: Callable[[], None] | None
    timer: TimerFn | None
    work: float
    """FLOP (for a GEMM) or bytes (for a copy) one step does."""
    unit: str
    close: Callable[[], None]
    device: torch.device

    def peak_device_memory_mb(self) -> float | None:
        from app.bench.torch_support import peak_device_memory_mb

        return peak_device_memory_mb(self.device)


class Primitive(ABC):
    info: ClassVar[PrimitiveInfo]
    collective: ClassVar[bool] = False
    """A collective runs in every rank of a config's ``devices`` (app/bench/data_parallel.py), and
    ``prepare`` is called there, in a process group; any other primitive measures one device."""

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        from app.bench.torch_support import device_unsupported

        return device_unsupported(config, machine)

    @abstractmethod
    def prepare(self, config: BenchConfig) -> PreparedPrimitive: ...


primitives: Registry[type[Primitive]] = Registry("primitive", package="app.bench.primitives")
