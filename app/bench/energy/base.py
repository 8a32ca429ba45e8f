"""Energy over a timed region, behind one interface: NVML's energy counter, RAPL, or an estimate.

A meter is one module of this package: a class with an ``EnergyMeterInfo`` registered with
``@meters.register``; ``meter_for`` asks them in their ``order`` and takes the first that offers
itself for the device.

Every figure says where it came from (``PowerSource``). Order of preference per device:
- a GPU: NVML's total-energy counter (mJ since driver load); sampling NVML power at 20 Hz when
  the GPU has no counter;
- the CPU: RAPL package (+ DRAM) counters where readable, with counter wrap handled;
  otherwise an estimate: TDP x this process's CPU utilisation, labelled ``estimate``.
A sampler thread also records the peak RSS of this process while the region runs.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import psutil

from app.contracts import MachineSpec, PowerSource
from app.registry import PluginInfo, Registry

SAMPLE_INTERVAL_S = 0.05


@dataclass(frozen=True, slots=True)
class EnergyReading:
    joules: float | None
    seconds: float
    source: PowerSource
    note: str | None = None

    @property
    def mean_power_w(self) -> float | None:
        return self.joules / self.seconds if self.joules is not None and self.seconds > 0 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyMeterInfo(PluginInfo):
    order: int
    """Asked in this order (lowest first); the first meter that offers itself for a device is used."""
    source: PowerSource

    def details(self) -> dict[str, Any]:
        return {"order": self.order, "source": self.source.value}


class EnergyMeter(ABC):
    info: ClassVar[EnergyMeterInfo]
    source: PowerSource

    @classmethod
    @abstractmethod
    def offer(cls, device_id: str, machine: MachineSpec) -> EnergyMeter | None:
        """This meter for the device, or None where it does not apply (a GPU meter for the CPU, say)."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> EnergyReading: ...


class NoMeter(EnergyMeter):
    """What a region gets when no meter offers itself: time, no energy, and the reason."""

    source = PowerSource.none

    @classmethod
    def offer(cls, device_id: str, machine: MachineSpec) -> EnergyMeter | None:
        return None

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


meters: Registry[type[EnergyMeter]] = Registry("energy_meter", package="app.bench.energy")


def meter_for(device_id: str, machine: MachineSpec) -> EnergyMeter:
    """The best meter this machine offers for the device."""
    for entry in sorted(meters, key=lambda e: e.plugin.info.order):
        meter = entry.plugin.offer(device_id, machine)
        if meter is not None:
            return meter
    return NoMeter(f"no energy meter applies to {device_id}")
