"""NVIDIA GPUs: NVML's total-energy counter, or sampled power where the GPU has no counter."""

from __future__ import annotations

import importlib
import time
from typing import Any

from app.bench.energy.base import EnergyMeter, EnergyMeterInfo, EnergyReading, NoMeter, Sampler, meters
from app.contracts import MachineSpec, PowerSource
from app.registry import Need


@meters.register
class NvmlMeter(EnergyMeter):
    """The GPU's total-energy counter; sampled power when the GPU has none."""

    info = EnergyMeterInfo(
        name="nvml",
        description="NVIDIA GPUs: NVML's total-energy counter, or NVML power sampled at 20 Hz",
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
