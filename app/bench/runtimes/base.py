"""The runtime plug-in shape: load a workload on a device in a precision, hand the harness a step.

A runtime only loads and runs; warm-up, repetition, timing statistics and energy belong to the
harness (app/bench/measure.py) and the runner.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from app.bench.config import BenchConfig
from app.bench.measure import TimerFn
from app.bench.workloads import Size, Workload
from app.contracts import MachineSpec
from app.registry import Registry


@dataclass
class Prepared:
    """A loaded config, ready to time."""

    step: Callable[[], object]
    sync: Callable[[], None] | None = None
    timer: TimerFn | None = None
    compile_time_s: float | None = None
    peak_device_memory_mb: Callable[[], float | None] = field(default=lambda: None)
    close: Callable[[], None] = field(default=lambda: None)


class Runtime(ABC):
    NAME: ClassVar[str]

    def unavailable(self) -> str | None:
        """Why this runtime cannot run on this machine at all (a missing package or provider), or None."""
        return None

    @abstractmethod
    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        """Why this config cannot run here (task, precision, device), or None."""

    @abstractmethod
    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        """Load the model and inputs on the device and return the step to time."""


runtimes: Registry[type[Runtime]] = Registry("runtime")
