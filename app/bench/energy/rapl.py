"""RAPL: the CPU package and DRAM energy counters, read from Linux powercap, wraps handled."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from app.bench.energy.base import EnergyMeter, EnergyMeterInfo, EnergyReading, meters
from app.contracts import MachineSpec, PowerSource

POWERCAP = "/sys/class/powercap"


@dataclass(frozen=True, slots=True)
class RaplZone:
    path: str
    max_uj: int

    def read_uj(self) -> int:
        with open(f"{self.path}/energy_uj") as handle:
            return int(handle.read())


def rapl_zones() -> list[RaplZone]:
    """Readable package and DRAM zones (not their core/uncore subzones, which the package includes)."""
    zones = []
    try:
        names = sorted(os.listdir(POWERCAP))
    except OSError:
        return []
    for name in names:
        if not name.startswith("intel-rapl:"):
            continue
        path = f"{POWERCAP}/{name}"
        try:
            label = Path(f"{path}/name").read_text().strip()
            if name.count(":") > 1 and label != "dram":
                continue
            zone = RaplZone(path, int(Path(f"{path}/max_energy_range_uj").read_text()))
            zone.read_uj()
        except (OSError, ValueError):
            continue
        zones.append(zone)
    return zones


def counter_delta(before: int, after: int, max_value: int) -> int:
    """A wrapping counter's increase (at most one wrap: regions are far shorter than a wrap period)."""
    return after - before if after >= before else after + max_value + 1 - before


@meters.register
class RaplMeter(EnergyMeter):
    info = EnergyMeterInfo(
        name="rapl",
        description="RAPL package + DRAM energy counters (Linux powercap), the whole socket",
        order=20,
        source=PowerSource.rapl,
    )
    source = PowerSource.rapl

    @classmethod
    def offer(cls, device_id: str, machine: MachineSpec) -> EnergyMeter | None:
        if device_id != "cpu" or not machine.power_sensors.rapl_readable:
            return None
        zones = rapl_zones()
        return cls(zones) if zones else None

    def __init__(self, zones: list[RaplZone]) -> None:
        self.zones = zones
        self._before: list[int] = []
        self._start = 0.0

    def start(self) -> None:
        self._before = [z.read_uj() for z in self.zones]
        self._start = time.perf_counter()

    def stop(self) -> EnergyReading:
        after = [z.read_uj() for z in self.zones]
        seconds = time.perf_counter() - self._start
        micro = sum(counter_delta(b, a, z.max_uj) for z, b, a in zip(self.zones, self._before, after, strict=True))
        return EnergyReading(micro / 1e6, seconds, self.source, "RAPL package + DRAM (whole socket, not this process)")
