"""The runtime plug-in shape: load a workload on a device in a precision, hand the harness a step.

A runtime only loads and runs; warm-up, repetition, timing statistics and energy belong to the
harness (app/bench/measure.py) and the runner. A runtime is one file in this package: a class
with a ``RuntimeInfo`` registered with ``@runtimes.register``; its module imports its library
(torch, onnxruntime) inside methods only, so the list of runtimes is readable anywhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from app.bench.config import BenchConfig
from app.bench.measure import TimerFn
from app.bench.variants.base import MODEL_KINDS, Variant, VariantKind
from app.bench.workloads.base import Size, Workload
from app.contracts import MachineSpec
from app.registry import PluginInfo, Registry


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeInfo(PluginInfo):
    devices: tuple[str, ...] = ("cpu", "cuda")
    """The device kinds it runs on."""
    variant_kinds: tuple[VariantKind, ...] = MODEL_KINDS
    """The kinds of model variant it measures: pruned and low-rank models by default (they are torch
    models, and so is their ONNX export); quantisation where the runtime quantises."""

    def details(self) -> dict[str, Any]:
        return {"devices": list(self.devices), "variant_kinds": [kind.value for kind in self.variant_kinds]}


@dataclass
class Prepared:
    """A loaded config, ready to time."""

    step: Callable[[], object]
    sync: Callable[[], None] | None = None
    timer: TimerFn | None = None
    compile_time_s: float | None = None
    peak_device_memory_mb: Callable[[], float | None] = field(default=lambda: None)
    close: Callable[[], None] = field(default=lambda: None)
    tokens_per_step: int | None = None
    """A language model's tokens per step (prefill: batch x prompt; decode: batch; train: batch x sequence)."""
    context: int | None = None
    kv_cache_bytes: int | None = None


class Runtime(ABC):
    info: ClassVar[RuntimeInfo]

    @classmethod
    def version(cls) -> str | None:
        """The installed version of the library it runs on (its first need), or None."""
        return cls.info.needs[0].version() if cls.info.needs else None

    @classmethod
    def software(cls) -> dict[str, str]:
        """What the software probe records for this runtime: its libraries' versions under their
        names, and facts about them under ``name.fact``. Installed libraries only."""
        return {need.distribution: version for need in cls.info.needs if (version := need.version())}

    def unavailable(self) -> str | None:
        """Why this runtime cannot run on this machine at all (a missing package or provider), or None."""
        return runtimes.unavailable(self.info.name)

    @abstractmethod
    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        """Why this config cannot run here (task, precision, device), or None."""

    def variant_unsupported(self, variant: Variant, config: BenchConfig) -> str | None:
        """Why this runtime does not measure the config's variant, or None."""
        if variant.info.kind in self.info.variant_kinds:
            return None
        takes = ", ".join(kind.value for kind in self.info.variant_kinds) or "none"
        kind = variant.info.kind.value
        return f"{self.info.name} does not measure {kind} variants ({variant.info.name}); it takes: {takes}"

    @abstractmethod
    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        """Load the model and inputs on the device and return the step to time."""

    def ahead(self, config: BenchConfig, later: Sequence[BenchConfig], size: Size) -> None:
        """Before ``config`` is prepared (the runner has checked it can run here): make, in one go, what
        it shares with ``later``, the suite's configs of its runtime and workload still to come that can
        run here. LiteRT converts the forms of a model that the suite runs from one export; the others
        share nothing. What fails here is left for each config's own ``prepare`` to meet and report."""
        return None


runtimes: Registry[type[Runtime]] = Registry("runtime", package="app.bench.runtimes")
