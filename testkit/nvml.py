"""NVML as a real H100 answered it, replayed for the GPU probe (see tests/fixtures/machines/h100/probe.json).

This stands in for the NVIDIA driver library only, which this machine has not got; the probe code
under test is the real one. Readings a replay has no value for raise NOT_SUPPORTED, as NVML does.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_NOT_SUPPORTED = 3


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return {12: "NVML Shared Library Not Found", 9: "Driver Not Loaded", 3: "Not Supported"}.get(
            self.value, f"NVML error {self.value}"
        )


class ReplayNvml:
    """The subset of pynvml the probe calls, answering from one captured GPU per entry of ``gpus``."""

    NVMLError = NVMLError
    NVML_CLOCK_SM = NVML_CLOCK_SM
    NVML_CLOCK_MEM = NVML_CLOCK_MEM
    NVML_TEMPERATURE_GPU = NVML_TEMPERATURE_GPU

    def __init__(self, gpus: list[dict[str, Any]], *, init_error: int | None = None) -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.initialised = 0

    @classmethod
    def from_probe_json(cls, path: Path, *, copies: int = 1) -> ReplayNvml:
        nvml = json.loads(path.read_text())["env"]["nvml"]
        gpus = []
        for i in range(copies):
            gpu = dict(nvml)
            if i:
                gpu["uuid"] = nvml["uuid"][:-2] + f"{i:02d}"
            gpus.append(gpu)
        return cls(gpus)

    def _gpu(self, handle: int) -> dict[str, Any]:
        return self.gpus[handle]

    def _field(self, handle: int, key: str) -> Any:
        value = self._gpu(handle).get(key)
        if value is None:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        return value

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self.gpus[0]["driver"]) if self.gpus else "580.159.04"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self.gpus[0]["cuda_driver"]) if self.gpus else 13000

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.gpus):
            raise NVMLError(2)
        return index

    def nvmlDeviceGetName(self, h: int) -> str:
        return str(self._field(h, "name"))

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return str(self._field(h, "uuid"))

    def nvmlDeviceGetMemoryInfo(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(total=int(self._field(h, "mem_total_mb")) * 1024 * 1024)

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        major, minor = self._field(h, "cc")
        return int(major), int(minor)

    def nvmlDeviceGetMaxClockInfo(self, h: int, clock: int) -> int:
        return int(self._field(h, "max_sm_clock_mhz" if clock == NVML_CLOCK_SM else "max_mem_clock_mhz"))

    def nvmlDeviceGetMemoryBusWidth(self, h: int) -> int:
        return int(self._field(h, "mem_bus_width"))

    def _milliwatts(self, h: int, key: str) -> int:
        return round(float(self._field(h, key)) * 1000)

    def nvmlDeviceGetPowerManagementLimit(self, h: int) -> int:
        return self._milliwatts(h, "power_limit_w")

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h: int) -> int:
        return self._milliwatts(h, "power_default_limit_w")

    def nvmlDeviceGetPowerManagementLimitConstraints(self, h: int) -> tuple[int, int]:
        low, high = self._field(h, "power_limit_range_w")
        return round(low * 1000), round(high * 1000)

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return self._milliwatts(h, "enforced_power_limit_w")

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return self._milliwatts(h, "power_now_w")

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        return int(self._field(h, "energy_total_mj"))

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return int(self._field(h, "pcie_max_gen"))

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return int(self._field(h, "pcie_max_width"))

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        return int(self._field(h, "pcie_cur_gen"))

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        return int(self._field(h, "pcie_cur_width"))

    def nvmlDeviceGetEccMode(self, h: int) -> tuple[int, int]:
        current, pending = self._field(h, "ecc")
        return int(current), int(pending)

    def nvmlDeviceGetMigMode(self, h: int) -> tuple[int, int]:
        current, pending = self._field(h, "mig")
        return int(current), int(pending)

    def nvmlDeviceGetPersistenceMode(self, h: int) -> int:
        return int(self._field(h, "persistence"))

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return int(self._field(h, "temp_c"))

    def nvmlDeviceGetClockInfo(self, h: int, clock: int) -> int:
        if clock != NVML_CLOCK_SM:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        return int(self._field(h, "sm_clock_mhz"))

    def nvmlDeviceGetNumGpuCores(self, h: int) -> int:
        return int(self._field(h, "num_cores"))

    def nvmlDeviceGetArchitecture(self, h: int) -> int:
        return int(self._field(h, "arch"))

    def nvmlDeviceGetBrand(self, h: int) -> int:
        return int(self._field(h, "brand"))


READINGS = {
    "name": "nvmlDeviceGetName",
    "uuid": "nvmlDeviceGetUUID",
    "cc": "nvmlDeviceGetCudaComputeCapability",
    "mem_bus_width": "nvmlDeviceGetMemoryBusWidth",
    "energy_total_mj": "nvmlDeviceGetTotalEnergyConsumption",
    "pcie_max_gen": "nvmlDeviceGetMaxPcieLinkGeneration",
    "pcie_max_width": "nvmlDeviceGetMaxPcieLinkWidth",
    "pcie_cur_gen": "nvmlDeviceGetCurrPcieLinkGeneration",
    "pcie_cur_width": "nvmlDeviceGetCurrPcieLinkWidth",
    "ecc": "nvmlDeviceGetEccMode",
    "mig": "nvmlDeviceGetMigMode",
    "persistence": "nvmlDeviceGetPersistenceMode",
    "num_cores": "nvmlDeviceGetNumGpuCores",
    "arch": "nvmlDeviceGetArchitecture",
    "brand": "nvmlDeviceGetBrand",
}
"""The captured key of each one-handle NVML reading ReplayNvml answers (watts and clocks apart)."""

WATTS = {
    "power_limit_w": "nvmlDeviceGetPowerManagementLimit",
    "power_default_limit_w": "nvmlDeviceGetPowerManagementDefaultLimit",
    "enforced_power_limit_w": "nvmlDeviceGetEnforcedPowerLimit",
    "power_now_w": "nvmlDeviceGetPowerUsage",
}


def capture_gpu(nvml: Any, index: int) -> dict[str, Any]:
    """One GPU as a live pynvml answers it, in the form ReplayNvml replays (what probe.json holds).

    A reading the GPU does not support is left out, so that the replay raises NOT_SUPPORTED for it too."""
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    found: dict[str, Any] = {
        "driver": _plain(nvml.nvmlSystemGetDriverVersion()),
        "cuda_driver": nvml.nvmlSystemGetCudaDriverVersion(),
    }

    def keep(key: str, call: Any) -> None:
        try:
            value = call()
        except nvml.NVMLError:
            return
        found[key] = list(value) if isinstance(value, tuple) else _plain(value)

    for key, name in READINGS.items():
        keep(key, lambda name=name: getattr(nvml, name)(handle))
    keep("mem_total_mb", lambda: nvml.nvmlDeviceGetMemoryInfo(handle).total // (1024 * 1024))
    for key, name in WATTS.items():
        keep(key, lambda name=name: getattr(nvml, name)(handle) / 1000)
    keep("power_limit_range_w", lambda: [w / 1000 for w in nvml.nvmlDeviceGetPowerManagementLimitConstraints(handle)])
    keep("max_sm_clock_mhz", lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM))
    keep("max_mem_clock_mhz", lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_MEM))
    keep("sm_clock_mhz", lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))
    keep("temp_c", lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
    return found


def _plain(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value
