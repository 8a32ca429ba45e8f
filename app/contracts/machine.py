"""What a machine reports about itself: CPU, memory, devices, software, power sensors."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from app.contracts.common import (
    SCHEMA_VERSION,
    DeviceId,
    DeviceKind,
    Label,
    Name,
    NonNegative,
    Positive,
    Strict,
    Text,
    device_kind_of,
)


class CpuInfo(Strict):
    arch: Label
    vendor: Label | None = None
    model_name: Label
    family: int | None = None
    model: int | None = None
    stepping: int | None = None
    sockets: int = Field(ge=1)
    physical_cores: int = Field(ge=1)
    logical_cores: int = Field(ge=1)
    threads_per_core: int = Field(ge=1)
    base_mhz: NonNegative | None = None
    max_mhz: NonNegative | None = None
    l1d_kib: int | None = Field(default=None, ge=0)
    l2_kib: int | None = Field(default=None, ge=0)
    l3_kib: int | None = Field(default=None, ge=0)
    numa_nodes: int = Field(default=1, ge=1)
    isa_features: list[Annotated[str, Field(max_length=32)]] = Field(default_factory=list, max_length=64)
    hypervisor: Label | None = None
    effective_cpus: Positive = Field(description="CPUs this process may use: cgroup quota and cpuset applied.")
    effective_cpus_reason: Text | None = None


class MemoryInfo(Strict):
    total_mb: NonNegative
    available_mb: NonNegative
    swap_total_mb: NonNegative = 0.0


class NvidiaInfo(Strict):
    """What NVML says of one NVIDIA GPU; None where NVML could not say."""

    uuid: Label
    compute_capability: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+$")] | None = None
    sm_count: int | None = Field(default=None, ge=1)
    max_sm_clock_mhz: NonNegative | None = None
    max_mem_clock_mhz: NonNegative | None = None
    mem_bus_width_bits: int | None = Field(default=None, ge=0)
    power_limit_w: NonNegative | None = None
    power_default_limit_w: NonNegative | None = None
    power_limit_min_w: NonNegative | None = None
    power_limit_max_w: NonNegative | None = None
    enforced_power_limit_w: NonNegative | None = None
    power_now_w: NonNegative | None = None
    energy_counter: bool = False
    pcie_max_gen: int | None = None
    pcie_max_width: int | None = None
    pcie_cur_gen: int | None = None
    pcie_cur_width: int | None = None
    driver_version: Label | None = None
    cuda_driver_version: Label | None = None
    ecc_enabled: bool | None = None
    mig_enabled: bool | None = None
    persistence_mode: bool | None = None
    temperature_c: float | None = None


class Device(Strict):
    """One compute unit of a machine: ``cpu`` or ``cuda:N``."""

    id: DeviceId
    kind: DeviceKind
    name: Label
    memory_total_mb: NonNegative | None = None
    catalog_id: Name | None = None
    catalog_note: Text | None = Field(default=None, description="Why it matched, or why nothing did.")
    nvidia: NvidiaInfo | None = None

    @model_validator(mode="after")
    def _kind_matches_id(self) -> Device:
        if device_kind_of(self.id) != self.kind:
            raise ValueError(f"device id {self.id!r} does not match kind {self.kind.value!r}")
        return self


SoftwareKey = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+\-]*$")]
SOFTWARE_MAX_ENTRIES = 128

_LEGACY_SOFTWARE = {
    "torch": "torch",
    "torch_cuda": "torch.cuda",
    "torch_cudnn": "torch.cudnn",
    "torch_num_threads": "torch.num_threads",
    "onnxruntime": "onnxruntime",
    "numpy": "numpy",
    "numpy_blas": "numpy.blas",
}


class SoftwareStack(Strict):
    """The OS and Python, and a mapping of what the runtimes and probes found: a library's version
    under its name (``torch``), a fact about it under ``name.fact`` (``torch.cuda``,
    ``onnxruntime.providers``). A new runtime adds its own keys; nothing here names a library."""

    os: Label
    kernel: Label | None = None
    python: Label
    libraries: dict[SoftwareKey, Label] = Field(default_factory=dict, max_length=SOFTWARE_MAX_ENTRIES)

    @model_validator(mode="before")
    @classmethod
    def _from_named_fields(cls, data: object) -> object:
        """Agents before the mapping sent one field per library; read those into it."""
        if not isinstance(data, dict) or not any(k in data for k in (*_LEGACY_SOFTWARE, "torch_cpu_backends")):
            return data
        data = dict(data)
        libraries = dict(data.get("libraries") or {})
        for field, key in _LEGACY_SOFTWARE.items():
            value = data.pop(field, None)
            if value is not None:
                libraries[key] = str(value)
        for name, value in dict(data.pop("torch_cpu_backends", None) or {}).items():
            libraries[f"torch.{str(name).replace(' ', '_')}"] = str(value)
        providers = data.pop("onnxruntime_providers", None)
        if providers:
            libraries["onnxruntime.providers"] = ",".join(map(str, providers))
        data["libraries"] = libraries
        return data


class PowerSensors(Strict):
    rapl_readable: bool = False
    rapl_domains: list[Label] = Field(default_factory=list, max_length=32)
    nvml_energy_counter: bool = False
    note: Text | None = None


class ProbeError(Strict):
    probe: Name
    reason: Text


FactKey = Annotated[str, Field(min_length=1, max_length=64)]
Fact = Annotated[str, Field(max_length=200)] | float | int | bool | None
FACTS_MAX = 32


class MachineSpec(Strict):
    """Everything a result needs to be tied to the hardware it was measured on."""

    schema_version: Literal[1] = SCHEMA_VERSION
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{16,64}$")]
    hostname: Label
    cpu: CpuInfo
    memory: MemoryInfo
    devices: list[Device] = Field(min_length=1, max_length=64)
    software: SoftwareStack
    power_sensors: PowerSensors = Field(default_factory=PowerSensors)
    facts: dict[Name, dict[FactKey, Fact]] = Field(
        default_factory=dict,
        max_length=FACTS_MAX,
        description="What a probe found that no typed field holds, under the probe's name (at most 32 each).",
    )
    probe_errors: list[ProbeError] = Field(default_factory=list, max_length=64)

    def device(self, device_id: str) -> Device | None:
        """The device with this id ('cpu', 'cuda:0'), or None."""
        return next((d for d in self.devices if d.id == device_id), None)

    @model_validator(mode="after")
    def _facts_are_bounded(self) -> MachineSpec:
        for probe, facts in self.facts.items():
            if len(facts) > FACTS_MAX:
                raise ValueError(f"facts of probe {probe!r}: at most {FACTS_MAX} entries, got {len(facts)}")
        return self

    @model_validator(mode="after")
    def _unique_devices(self) -> MachineSpec:
        ids = [d.id for d in self.devices]
        if len(ids) != len(set(ids)):
            raise ValueError(f"device ids must be unique, got {ids}")
        return self


# --------------------------------------------------------------------------- results
