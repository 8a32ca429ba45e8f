"""NVIDIA GPUs through NVML (the nvidia-ml-py package, imported as pynvml).

Every reading is taken on its own: a field the driver does not support on this GPU is None,
and only a failure to start NVML at all fails the probe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from app import catalog
from app.contracts import Device, DeviceKind, NvidiaInfo
from app.probes.base import Probe, ProbeContext, ProbeInfo, probes

T = TypeVar("T")
MIB = 1024 * 1024


def load_nvml() -> Any:
    try:
        import pynvml
    except ImportError as exc:
        raise RuntimeError("the nvidia-ml-py package is not installed") from exc
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def torch_sm_counts() -> dict[str, int]:
    """SM count per GPU UUID as torch sees them; empty without a CUDA build of torch."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    counts: dict[str, int] = {}
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            counts[f"GPU-{uuid}"] = int(props.multi_processor_count)
    return counts


class NvmlReader:
    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml

    def maybe(self, call: Callable[[], T]) -> T | None:
        """A reading, or None when NVML says this GPU does not support it."""
        try:
            return call()
        except self.nvml.NVMLError:
            return None

    def device(self, index: int, sm_counts: dict[str, int], driver: str | None, cuda: str | None) -> Device:
        nv = self.nvml
        handle = nv.nvmlDeviceGetHandleByIndex(index)
        name = _text(nv.nvmlDeviceGetName(handle))
        uuid = _text(nv.nvmlDeviceGetUUID(handle))
        memory = self.maybe(lambda: nv.nvmlDeviceGetMemoryInfo(handle))
        cc = self.maybe(lambda: nv.nvmlDeviceGetCudaComputeCapability(handle))
        limits = self.maybe(lambda: nv.nvmlDeviceGetPowerManagementLimitConstraints(handle))
        ecc = self.maybe(lambda: nv.nvmlDeviceGetEccMode(handle))
        mig = self.maybe(lambda: nv.nvmlDeviceGetMigMode(handle))
        energy = self.maybe(lambda: nv.nvmlDeviceGetTotalEnergyConsumption(handle))

        def watts(call: Callable[[], int]) -> float | None:
            milliwatts = self.maybe(call)
            return milliwatts / 1000 if milliwatts is not None else None

        catalog_id, note = catalog.match_gpu(name)
        info = NvidiaInfo(
            uuid=uuid,
            compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
            sm_count=sm_counts.get(uuid),
            max_sm_clock_mhz=self.maybe(lambda: nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_SM)),
            max_mem_clock_mhz=self.maybe(lambda: nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_MEM)),
            mem_bus_width_bits=self.maybe(lambda: nv.nvmlDeviceGetMemoryBusWidth(handle)),
            power_limit_w=watts(lambda: nv.nvmlDeviceGetPowerManagementLimit(handle)),
            power_default_limit_w=watts(lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(handle)),
            power_limit_min_w=limits[0] / 1000 if limits else None,
            power_limit_max_w=limits[1] / 1000 if limits else None,
            enforced_power_limit_w=watts(lambda: nv.nvmlDeviceGetEnforcedPowerLimit(handle)),
            power_now_w=watts(lambda: nv.nvmlDeviceGetPowerUsage(handle)),
            energy_counter=energy is not None,
            pcie_max_gen=self.maybe(lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
            pcie_max_width=self.maybe(lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(handle)),
            pcie_cur_gen=self.maybe(lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
            pcie_cur_width=self.maybe(lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(handle)),
            driver_version=driver,
            cuda_driver_version=cuda,
            ecc_enabled=bool(ecc[0]) if ecc else None,
            mig_enabled=bool(mig[0]) if mig else None,
            persistence_mode=_bool(self.maybe(lambda: nv.nvmlDeviceGetPersistenceMode(handle))),
            temperature_c=self.maybe(lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)),
        )
        return Device(
            id=f"cuda:{index}",
            kind=DeviceKind.cuda,
            name=name,
            memory_total_mb=round(memory.total / MIB, 1) if memory else None,
            catalog_id=catalog_id,
            catalog_note=note,
            nvidia=info,
        )


def _bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _cuda_version(value: int | None) -> str | None:
    return None if value is None else f"{value // 1000}.{value % 1000 // 10}"


@probes.register
class NvidiaProbe(Probe):
    info = ProbeInfo(
        name="nvidia",
        description="NVIDIA GPUs through NVML (clocks, power limits, PCIe, ECC, MIG, energy counter)",
        order=30,
    )

    def run(self, ctx: ProbeContext) -> None:
        nvml = ctx.nvml if ctx.nvml is not None else load_nvml()
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as exc:
            raise RuntimeError(f"NVML could not start ({exc}): no NVIDIA driver here, or no GPU") from exc
        try:
            reader = NvmlReader(nvml)
            driver = reader.maybe(lambda: _text(nvml.nvmlSystemGetDriverVersion()))
            cuda = _cuda_version(reader.maybe(nvml.nvmlSystemGetCudaDriverVersion))
            sm_counts = ctx.cuda_sm_counts if ctx.cuda_sm_counts is not None else torch_sm_counts()
            ctx.gpus = [reader.device(i, sm_counts, driver, cuda) for i in range(nvml.nvmlDeviceGetCount())]
        finally:
            nvml.nvmlShutdown()
