"""The CPU's energy estimated from its TDP and this process's utilisation, where no counter is readable."""

from __future__ import annotations

import time

import psutil

from app import catalog
from app.bench.energy.base import EnergyMeter, EnergyMeterInfo, EnergyReading, meters
from app.contracts import MachineSpec, PowerSource

ASSUMED_WATTS_PER_CORE = 5.0
"""For a CPU the catalog cannot identify: server parts draw 3.5-7 W per core at TDP
(EPYC 9654 360 W / 96, Xeon 8480+ 350 W / 56)."""
MIN_ESTIMATE_S = 0.2
"""CPU times tick in 10 ms steps: a shorter region would estimate zero energy, which is false."""


@meters.register
class EstimateMeter(EnergyMeter):
    """TDP x this process's share of the machine's CPUs over the region: labelled an estimate."""

    info = EnergyMeterInfo(
        name="estimate",
        description="CPU estimate: TDP x this process's CPU utilisation (labelled an estimate)",
        order=90,
        source=PowerSource.estimate,
    )
    source = PowerSource.estimate

    @classmethod
    def offer(cls, device_id: str, machine: MachineSpec) -> EnergyMeter | None:
        if device_id != "cpu":
            return None
        cpu_device = machine.device("cpu")
        entry = catalog.get(cpu_device.catalog_id) if cpu_device and cpu_device.catalog_id else None
        if entry is not None and entry.tdp_w:
            tdp = entry.tdp_w * machine.cpu.sockets
            note = f"estimate: TDP {tdp:g} W ({entry.name} x {machine.cpu.sockets}) x CPU utilisation"
        else:
            tdp = ASSUMED_WATTS_PER_CORE * machine.cpu.physical_cores
            note = (
                f"estimate: no TDP known for {machine.cpu.model_name!r}; assumed {ASSUMED_WATTS_PER_CORE:g} W"
                f" per core x {machine.cpu.physical_cores} cores x CPU utilisation"
            )
        return cls(tdp, machine.cpu.logical_cores, note)

    def __init__(self, tdp_w: float, logical_cpus: int, note: str) -> None:
        self.tdp_w = tdp_w
        self.logical_cpus = logical_cpus
        self.note = note
        self._process = psutil.Process()
        self._cpu = 0.0
        self._start = 0.0

    def start(self) -> None:
        times = self._process.cpu_times()
        self._cpu = times.user + times.system
        self._start = time.perf_counter()

    def stop(self) -> EnergyReading:
        times = self._process.cpu_times()
        seconds = time.perf_counter() - self._start
        if seconds < MIN_ESTIMATE_S:
            return EnergyReading(None, seconds, PowerSource.none, f"{seconds * 1000:.0f} ms is too short to estimate")
        busy_cpus = (times.user + times.system - self._cpu) / seconds if seconds > 0 else 0.0
        utilisation = min(1.0, busy_cpus / self.logical_cpus)
        return EnergyReading(self.tdp_w * utilisation * seconds, seconds, self.source, self.note)
