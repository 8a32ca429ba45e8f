"""Energy over a timed region, behind one interface: NVML's energy counter, RAPL, or an estimate.

Every figure says where it came from (``PowerSource``). Order of preference per device:
- a GPU: NVML's total-energy counter (mJ since driver load); sampling NVML power at 20 Hz when
  the GPU has no counter;
- the CPU: RAPL package (+ DRAM) counters where readable, with counter wrap handled;
  otherwise an estimate: TDP x this process's CPU utilisation, labelled ``estimate``.
A sampler thread also records the peak RSS of this process while the region runs.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from app import catalog
from app.contracts import MachineSpec, PowerSource

POWERCAP = "/sys/class/powercap"
SAMPLE_INTERVAL_S = 0.05
ASSUMED_WATTS_PER_CORE = 5.0
"""For a CPU the catalog cannot identify: server parts draw 3.5-7 W per core at TDP
(EPYC 9654 360 W / 96, Xeon 8480+ 350 W / 56)."""


@dataclass(frozen=True, slots=True)
class EnergyReading:
    joules: float | None
    seconds: float
    source: PowerSource
    note: str | None = None

    @property
    def mean_power_w(self) -> float | None:
        return self.joules / self.seconds if self.joules is not None and self.seconds > 0 else None


class EnergyMeter(ABC):
    source: PowerSource

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> EnergyReading: ...


class NoMeter(EnergyMeter):
    source = PowerSource.none

    def __init__(self, note: str) -> None:
        self.note = note
        self._start = 0.0

    def start(self) -> None:
        self._start = time.perf_counter()

    def stop(self) -> EnergyReading:
        return EnergyReading(None, time.perf_counter() - self._start, self.source, self.note)


class Metered:
    """A meter over a region (the harness enters it around its sampling phase only)."""

    def __init__(self, meter: EnergyMeter) -> None:
        self.meter = meter
        self._reading: EnergyReading | None = None

    def __enter__(self) -> Metered:
        self.meter.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._reading = self.meter.stop()

    @property
    def reading(self) -> EnergyReading:
        if self._reading is None:
            raise RuntimeError("the metered region has not run")
        return self._reading


class Sampler:
    """Calls ``sample`` every interval on a thread while running; the callable keeps its own state."""

    def __init__(self, sample: Any, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self.sample = sample
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        self.sample()
        self._thread = threading.Thread(target=self._run, name="hwadvisor-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()


class PeakRss:
    """Peak resident memory of this process, in MiB, sampled."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self.peak_mb = 0.0

    def __call__(self) -> None:
        self.peak_mb = max(self.peak_mb, self._process.memory_info().rss / 2**20)


# ----------------------------------------------------------------------------- RAPL


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


class RaplMeter(EnergyMeter):
    source = PowerSource.rapl

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


MIN_ESTIMATE_S = 0.2
"""CPU times tick in 10 ms steps: a shorter region would estimate zero energy, which is false."""


class EstimateMeter(EnergyMeter):
    """TDP x this process's share of the machine's CPUs over the region: labelled an estimate."""

    source = PowerSource.estimate

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


# ----------------------------------------------------------------------------- NVML


class NvmlMeter(EnergyMeter):
    """The GPU's total-energy counter; sampled power when the GPU has none."""

    source = PowerSource.nvml

    def __init__(self, index: int, *, counter: bool, nvml: Any | None = None) -> None:
        self.nvml: Any = nvml if nvml is not None else importlib.import_module("pynvml")
        self.nvml.nvmlInit()
        self.handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
        self.counter = counter
        self._before = 0
        self._start = 0.0
        self._samples: list[float] = []
        self._sampler: Sampler | None = None

    def _sample_power(self) -> None:
        self._samples.append(self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000)

    def start(self) -> None:
        self._samples = []
        if self.counter:
            self._before = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
        else:
            self._sampler = Sampler(self._sample_power)
            self._sampler.__enter__()
        self._start = time.perf_counter()

    def stop(self) -> EnergyReading:
        seconds = time.perf_counter() - self._start
        if self.counter:
            millijoules = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) - self._before
            return EnergyReading(millijoules / 1000, seconds, self.source, "NVML total-energy counter")
        assert self._sampler is not None
        self._sampler.__exit__(None, None, None)
        mean_w = sum(self._samples) / len(self._samples)
        return EnergyReading(mean_w * seconds, seconds, self.source, "NVML power sampled at 20 Hz")


def meter_for(device_id: str, machine: MachineSpec) -> EnergyMeter:
    """The best meter this machine offers for the device."""
    if device_id.startswith("cuda:"):
        device = next((d for d in machine.devices if d.id == device_id), None)
        if device is None or device.nvidia is None:
            return NoMeter(f"NVML does not describe {device_id}")
        try:
            return NvmlMeter(int(device_id.split(":")[1]), counter=device.nvidia.energy_counter)
        except Exception as exc:  # NVML vanished since the probe
            return NoMeter(f"NVML failed: {exc}")
    zones = rapl_zones() if machine.power_sensors.rapl_readable else []
    if zones:
        return RaplMeter(zones)
    cpu_device = next(d for d in machine.devices if d.id == "cpu")
    entry = catalog.get(cpu_device.catalog_id) if cpu_device.catalog_id else None
    if entry is not None and entry.tdp_w:
        tdp = entry.tdp_w * machine.cpu.sockets
        note = f"estimate: TDP {tdp:g} W ({entry.name} x {machine.cpu.sockets}) x CPU utilisation"
    else:
        tdp = ASSUMED_WATTS_PER_CORE * machine.cpu.physical_cores
        note = (
            f"estimate: no TDP known for {machine.cpu.model_name!r}; assumed {ASSUMED_WATTS_PER_CORE:g} W per core"
            f" x {machine.cpu.physical_cores} cores x CPU utilisation"
        )
    return EstimateMeter(tdp, machine.cpu.logical_cores, note)
