"""The probe plug-in shape and the context a probe run fills in."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from app.contracts import CpuInfo, Device, Fact, MemoryInfo, PowerSensors, ProbeError, SoftwareStack
from app.probes.sources import Sources
from app.registry import PluginInfo, Registry


@dataclass
class ProbeContext:
    """What the probes found so far; a later probe may read what an earlier one set."""

    sources: Sources
    nvml: Any | None = None
    """The NVML binding to use (pynvml, or a replay of a captured GPU); None imports pynvml."""
    cuda_sm_counts: dict[str, int] | None = None
    """SM count per GPU UUID from a replay; None asks torch."""
    cpu: CpuInfo | None = None
    memory: MemoryInfo | None = None
    gpus: list[Device] = field(default_factory=list)
    software: SoftwareStack | None = None
    power: PowerSensors | None = None
    facts: dict[str, dict[str, Fact]] = field(default_factory=dict)
    """What a probe found that no typed part of the spec holds, under the probe's name."""
    errors: list[ProbeError] = field(default_factory=list)

    def fail(self, probe: str, reason: str) -> None:
        self.errors.append(ProbeError(probe=probe, reason=reason[:2000]))

    def captured(self, key: str) -> Any:
        """A fact a replayed machine carries in host.json (memory, software): libraries cannot tell it."""
        value = self.sources.facts().get(key)
        if value is None:
            raise RuntimeError(f"the captured machine has no {key} facts")
        return value


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeInfo(PluginInfo):
    order: int = 50
    """Who runs first, when one probe reads another's result (lowest first)."""

    def details(self) -> dict[str, Any]:
        return {"order": self.order}


class Probe(ABC):
    """One part of the machine: one file in this package, a class with a ``ProbeInfo`` registered
    with ``@probes.register``. A probe fills a typed part of the ProbeContext, or its own entry in
    ``ctx.facts`` (which reaches ``MachineSpec.facts``) when no typed part fits."""

    info: ClassVar[ProbeInfo]

    @abstractmethod
    def run(self, ctx: ProbeContext) -> None:
        """Fill in ctx; raise (or call ctx.fail) when the part cannot be read. Never exits the process."""


probes: Registry[type[Probe]] = Registry("probe", package="app.probes")
