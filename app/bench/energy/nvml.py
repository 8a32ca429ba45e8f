"""NVIDIA GPUs: NVML's total-energy counter, or sampled power where the GPU has no counter or the
region is too short for the counter's steps (an H200 steps it every 100 ms)."""

from __future__ import annotations

import importlib
import time
from typing import Any

from app.bench.energy.base import (
    SAMPLE_INTERVAL_S,
    EnergyMeter,
    EnergyMeterInfo,
    EnergyReading,
    NoMeter,
    Sampler,
    meters,
)
from app.contracts import MachineSpec, PowerSource
from app.registry import Need

COUNTER_POLL_S = 0.01
"""How often the counter is read: the moment of each step it takes is known to within this."""
COUNTER_MIN_COVER = 0.5
"""The counter's steps must span this share of a region for their rate to stand for the region."""


@meters.register
class NvmlMeter(EnergyMeter):
    """The GPU's total-energy counter; sampled power when the GPU has none."""

    info = EnergyMeterInfo(
        name="nvml",
        description="NVIDIA GPUs: NVML's total-energy counter, or NVML power sampled where it steps too seldom",
        order=10,
        source=PowerSource.nvml,
        needs=(Need("pynvml", "nvidia-ml-py"),),
    )
    source = PowerSource.nvml

    @classmethod
    def offer(cls, device_id: str, machine: MachineSpec) -> EnergyMeter | None:
        if not device_id.startswith("cuda:"):
            return None
        device = machine.device(device_id)
        if device is None or device.nvidia is None:
            return NoMeter(f"NVML does not describe {device_id}")
        try:
            return cls(int(device_id.split(":")[1]), counter=device.nvidia.energy_counter)
        except Exception as exc:  # NVML vanished since the probe
            return NoMeter(f"NVML failed: {exc}")

    def __init__(self, index: int, *, counter: bool, nvml: Any | None = None) -> None:
        self.nvml: Any = nvml if nvml is not None else importlib.import_module("pynvml")
        self.nvml.nvmlInit()
        self.handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
        self.counter = counter
        self._start = 0.0
        self._samples: list[float] = []
        self._ticks: list[tuple[float, int]] = []
        self._sampler: Sampler | None = None

    def _sample(self) -> None:
        """Power, and the counter with the moment it was seen to move (it moves in steps: every
        100 ms on an H200)."""
        self._samples.append(self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000)
        if self.counter:
            value = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
            if not self._ticks or value != self._ticks[-1][1]:
                self._ticks.append((time.perf_counter(), value))

    def start(self) -> None:
        self._samples, self._ticks = [], []
        self._sampler = Sampler(self._sample, COUNTER_POLL_S if self.counter else SAMPLE_INTERVAL_S)
        self._sampler.__enter__()
        self._start = time.perf_counter()

    def stop(self) -> EnergyReading:
        seconds = time.perf_counter() - self._start
        assert self._sampler is not None
        self._sampler.__exit__(None, None, None)
        return reading(self._ticks, self._samples, seconds)


def reading(ticks: list[tuple[float, int]], samples_w: list[float], seconds: float) -> EnergyReading:
    """The region's energy from the counter's steps where they cover enough of it, else sampled power.

    ``ticks`` are (time, mJ) of the counter when the region began and at each step seen after; the
    energy between the first and the last step seen is exact, so its rate times the region's length
    is the region's energy, when those steps span at least COUNTER_MIN_COVER of it. A region too short
    for that takes the mean of NVML's power readings (a trailing one-second average on an H200, so
    it lags a change of load), and says so."""
    steps = ticks[1:]
    if len(steps) >= 2 and steps[-1][0] - steps[0][0] >= COUNTER_MIN_COVER * seconds:
        (t0, e0), (t1, e1) = steps[0], steps[-1]
        watts = (e1 - e0) / 1000 / (t1 - t0)
        note = f"NVML total-energy counter: {len(steps)} steps over {t1 - t0:.2f} s of the {seconds:.2f} s region"
        return EnergyReading(watts * seconds, seconds, PowerSource.nvml, note)
    mean_w = sum(samples_w) / len(samples_w)
    note = "NVML power sampled"
    if ticks:
        note += f" (the energy counter stepped {len(steps)} times in the {seconds:.2f} s region, too few to measure it)"
    return EnergyReading(mean_w * seconds, seconds, PowerSource.nvml, note)
