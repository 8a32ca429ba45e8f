"""Pydantic models on the wire, shared by agent and server.

Strict on purpose: unknown fields are rejected, numbers must be finite, and every
quantity carries its unit in its name (``latency_p99_ms``, ``energy_per_sample_j``).
The agent builds these; the server validates them again before anything is stored.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

SCHEMA_VERSION: Literal[1] = 1
T = TypeVar("T")

Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_.\-]*$")]
WorkloadName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_]*(/(infer|train))?$")]
DeviceId = Annotated[str, Field(min_length=1, max_length=16, pattern=r"^(cpu|cuda:\d{1,2})$")]
Text = Annotated[str, Field(max_length=2000)]
INT32_MAX = 2**31 - 1  # what an INTEGER column holds on PostgreSQL
Label = Annotated[str, Field(min_length=1, max_length=200)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]


class Strict(BaseModel):
    """Base of every wire model: unknown fields are errors, NaN and infinity are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=False)


class Precision(StrEnum):
    fp32 = "fp32"
    tf32 = "tf32"
    bf16 = "bf16"
    fp16 = "fp16"
    int8 = "int8"


class Task(StrEnum):
    infer = "infer"
    train = "train"


class ResultStatus(StrEnum):
    ok = "ok"
    oom = "oom"
    unsupported = "unsupported"
    error = "error"


class PowerSource(StrEnum):
    nvml = "nvml"
    rapl = "rapl"
    estimate = "estimate"
    none = "none"


class DeviceKind(StrEnum):
    cpu = "cpu"
    cuda = "cuda"


def device_kind_of(device: str) -> DeviceKind:
    return DeviceKind.cpu if device == "cpu" else DeviceKind.cuda


# --------------------------------------------------------------------------- machine spec


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
    compute_capability: Annotated[str, Field(pattern=r"^\d+\.\d+$")] | None = None
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


class SoftwareStack(Strict):
    os: Label
    kernel: Label | None = None
    python: Label
    torch: Label | None = None
    torch_cuda: Label | None = None
    torch_cudnn: Label | None = None
    torch_cpu_backends: dict[Annotated[str, Field(max_length=64)], Text] = Field(default_factory=dict)
    torch_num_threads: int | None = None
    onnxruntime: Label | None = None
    onnxruntime_providers: list[Label] = Field(default_factory=list, max_length=32)
    numpy: Label | None = None
    numpy_blas: Label | None = None


class PowerSensors(Strict):
    rapl_readable: bool = False
    rapl_domains: list[Label] = Field(default_factory=list, max_length=32)
    nvml_energy_counter: bool = False
    note: Text | None = None


class ProbeError(Strict):
    probe: Name
    reason: Text


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
    probe_errors: list[ProbeError] = Field(default_factory=list, max_length=64)

    @model_validator(mode="after")
    def _unique_devices(self) -> MachineSpec:
        ids = [d.id for d in self.devices]
        if len(ids) != len(set(ids)):
            raise ValueError(f"device ids must be unique, got {ids}")
        return self


# --------------------------------------------------------------------------- results


class Result(Strict):
    """The measurement of one config on one machine."""

    workload: WorkloadName
    runtime: Name
    device: DeviceId
    precision: Precision
    batch_size: int = Field(ge=1, le=1_000_000)
    threads: int | None = Field(default=None, ge=1, le=4096)
    status: ResultStatus
    reason: Text | None = None
    throughput_samples_per_s: NonNegative | None = None
    latency_p50_ms: NonNegative | None = None
    latency_p90_ms: NonNegative | None = None
    latency_p99_ms: NonNegative | None = None
    latency_mean_ms: NonNegative | None = None
    latency_ci95_low_ms: NonNegative | None = None
    latency_ci95_high_ms: NonNegative | None = None
    cv: NonNegative | None = Field(default=None, description="Coefficient of variation of step times.")
    iterations: int | None = Field(default=None, ge=1, le=INT32_MAX)
    stable: bool | None = None
    peak_memory_mb: NonNegative | None = None
    mean_power_w: NonNegative | None = None
    energy_per_sample_j: NonNegative | None = None
    power_source: PowerSource = PowerSource.none
    achieved_tflops: NonNegative | None = Field(default=None, description="For GEMM primitives.")
    bandwidth_gb_per_s: NonNegative | None = Field(default=None, description="For copy primitives.")
    compile_time_s: NonNegative | None = None

    @model_validator(mode="after")
    def _status_is_consistent(self) -> Result:
        if self.status is ResultStatus.ok:
            if self.throughput_samples_per_s is None or self.latency_p50_ms is None:
                raise ValueError("an ok result needs throughput_samples_per_s and latency_p50_ms")
            if self.iterations is None:
                raise ValueError("an ok result needs iterations")
        elif not self.reason:
            raise ValueError(f"a result with status {self.status.value!r} needs a reason")
        if (
            self.latency_ci95_low_ms is not None
            and self.latency_ci95_high_ms is not None
            and self.latency_ci95_low_ms > self.latency_ci95_high_ms
        ):
            raise ValueError("latency_ci95_low_ms is above latency_ci95_high_ms")
        if self.mean_power_w is not None and self.power_source is PowerSource.none:
            raise ValueError("mean_power_w needs a power_source other than 'none'")
        return self


class RunReport(Strict):
    """One execution of a suite on one machine. run_id is made by the agent and is the idempotency key."""

    run_id: uuid.UUID
    suite: Name
    job_id: uuid.UUID | None = None
    started_at: datetime
    finished_at: datetime
    agent_version: Annotated[str, Field(max_length=32)]
    machine: MachineSpec
    results: list[Result] = Field(max_length=100_000)

    @model_validator(mode="after")
    def _times_in_order(self) -> RunReport:
        if self.finished_at < self.started_at:
            raise ValueError("finished_at is before started_at")
        return self


class RunRead(Strict):
    run_id: uuid.UUID
    machine_id: uuid.UUID
    suite: str
    job_id: uuid.UUID | None
    started_at: datetime
    finished_at: datetime
    received_at: datetime
    result_count: int


class ResultRead(Result):
    id: int
    run_id: uuid.UUID
    machine_id: uuid.UUID
    hostname: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def device_kind(self) -> DeviceKind:
        return device_kind_of(self.device)


class Page(Strict, Generic[T]):
    items: list[T]
    total: int
    limit: int
    offset: int


# --------------------------------------------------------------------------- machines & auth


class MachineStatus(StrEnum):
    pending = "pending"
    online = "online"
    busy = "busy"
    offline = "offline"
    retired = "retired"


class MachineRead(Strict):
    id: uuid.UUID
    fingerprint: str
    hostname: str
    status: MachineStatus
    agent_state: str | None = None
    labels: dict[str, str]
    created_at: datetime
    last_seen_at: datetime | None
    hardware: str | None = Field(default=None, description="One line: its GPUs and CPU, e.g. '8 x NVIDIA H100 ...'.")
    spec: MachineSpec | None = None


class EnrollRequest(Strict):
    spec: MachineSpec


class EnrollResponse(Strict):
    machine_id: uuid.UUID
    machine_token: str
    status: MachineStatus


class TokenKind(StrEnum):
    admin = "admin"
    enrollment = "enrollment"
    machine = "machine"
    readonly = "readonly"


class TokenCreate(Strict):
    kind: Literal[TokenKind.enrollment, TokenKind.readonly]
    note: Annotated[str, Field(max_length=200)] = ""
    expires_in_hours: float | None = Field(default=None, gt=0, le=24 * 365 * 5)
    max_uses: int | None = Field(
        default=None, ge=1, le=INT32_MAX, description="Enrollment tokens only; unset is unlimited."
    )


class SessionLogin(Strict):
    token: Annotated[str, Field(min_length=1, max_length=400)]


class SessionInfo(Strict):
    kind: TokenKind | None = Field(description="null: not logged in.")


class TokenRead(Strict):
    id: str
    kind: TokenKind
    note: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    uses: int
    max_uses: int | None
    machine_id: uuid.UUID | None


class TokenIssued(TokenRead):
    token: str = Field(description="The secret; shown once, stored only as a hash.")


# --------------------------------------------------------------------------- jobs & asks


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"


Selector = dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=200)]]
SUITE_TOML_MAX = 64 * 1024
BUILT_IN_SUITES = ("quick", "standard", "full")


def _require_target(machine_id: uuid.UUID | None, selector: dict[str, str]) -> None:
    if machine_id is None and not selector:
        raise ValueError("a job needs a machine_id or a label selector (e.g. {'gpu': 'h100-sxm5-80gb'})")


class JobCreate(Strict):
    """Run a suite on one machine, or on every machine whose labels match the selector (one of them)."""

    suite: Name = Field(description="A built-in suite (quick, standard, full), or the name of suite_toml.")
    suite_toml: Annotated[str, Field(max_length=SUITE_TOML_MAX)] | None = Field(
        default=None, description="A suite file's text, for a suite of your own."
    )
    machine_id: uuid.UUID | None = None
    selector: Selector = Field(default_factory=dict)
    max_attempts: int = Field(default=3, ge=1, le=20)

    @model_validator(mode="after")
    def _has_a_target(self) -> JobCreate:
        _require_target(self.machine_id, self.selector)
        if self.suite_toml is None and self.suite not in BUILT_IN_SUITES:
            raise ValueError(f"suite {self.suite!r} is not built in ({', '.join(BUILT_IN_SUITES)}); send suite_toml")
        return self


class Job(Strict):
    id: uuid.UUID
    suite: Name
    suite_toml: str | None = None
    machine_id: uuid.UUID | None = None
    selector: Selector = Field(default_factory=dict)
    claimed_by: uuid.UUID | None = None
    status: JobStatus = JobStatus.queued
    attempts: int = Field(default=0, ge=0)
    max_attempts: int = Field(default=3, ge=1)
    configs_done: int = Field(default=0, ge=0)
    configs_total: int | None = Field(default=None, ge=0)
    created_at: datetime
    lease_expires_at: datetime | None = None
    message: Text | None = None

    @model_validator(mode="after")
    def _has_a_target(self) -> Job:
        _require_target(self.machine_id, self.selector)
        return self


# --------------------------------------------------------------------------- suites


ThreadSpec = Annotated[int, Field(ge=1, le=4096)] | Literal["all", "scaling"]


class MeasureSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time_budget_s: float = Field(default=3.0, gt=0, le=3600)
    warmup_budget_s: float = Field(default=3.0, gt=0, le=3600)
    target_ci: float = Field(default=0.02, gt=0, lt=1)
    max_iterations: int = Field(default=10_000, ge=1)


class GridSpec(BaseModel):
    """One row of a suite: it stands for every combination of its lists (see app/bench/suites.py)."""

    model_config = ConfigDict(extra="forbid")

    workloads: list[Name] = Field(min_length=1)
    tasks: list[Task] = [Task.infer]
    runtimes: list[Name] = ["torch-eager"]
    devices: list[Annotated[str, Field(pattern=r"^(cpu|cuda(:\d{1,2})?)$")]] = ["cpu"]
    precisions: list[Precision] = [Precision.fp32]
    batch_sizes: list[Annotated[int, Field(ge=1, le=1_000_000)]] = [1]
    threads: list[ThreadSpec] = ["all"]


class SuiteSpec(BaseModel):
    """A suite file (TOML) as data: a name, measurement settings and grids."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    description: str = ""
    measure: MeasureSpec = MeasureSpec()
    grid: list[GridSpec] = Field(min_length=1, max_length=200)


class AgentState(StrEnum):
    idle = "idle"
    running = "running"
    busy = "busy"
    """The machine is not quiet enough to measure (other load); the agent waits."""


class Heartbeat(Strict):
    state: AgentState = AgentState.idle
    note: Text | None = None
    spec: MachineSpec | None = Field(default=None, description="Sent when the hardware or software changed.")


class HeartbeatReply(Strict):
    machine_id: uuid.UUID
    status: MachineStatus
    heartbeat_interval_s: float


class JobProgress(Strict):
    configs_done: int = Field(ge=0, le=INT32_MAX)
    configs_total: int | None = Field(default=None, ge=0, le=INT32_MAX)


class JobFinish(Strict):
    """done or failed; queued hands the job back (an agent told to stop mid-job), to be run again."""

    status: Literal[JobStatus.done, JobStatus.failed, JobStatus.queued]
    message: Text | None = None


class MachineLabels(Strict):
    labels: dict[Annotated[str, Field(min_length=1, max_length=64)], Annotated[str, Field(max_length=200)]]


class Objective(StrEnum):
    throughput = "throughput"
    latency = "latency"
    throughput_per_watt = "throughput_per_watt"
    cost_per_million_samples = "cost_per_million_samples"
    energy_per_sample = "energy_per_sample"


class CustomWorkload(Strict):
    """A workload outside the zoo, described by its cost per sample."""

    name: Name
    flops_per_sample: Annotated[float, Field(gt=0, le=1e18, description="FLOP per sample (1e18: an exaFLOP).")]
    bytes_per_sample: Annotated[float, Field(gt=0, le=1e15, description="Bytes moved per sample (1e15: a petabyte).")]
    parameters: int = Field(ge=0, le=10**15)


class Constraints(Strict):
    power_budget_w: Positive | None = Field(default=None, description="Per device.")
    system_power_budget_w: Positive | None = None
    device_count: int = Field(default=1, ge=1, le=1024)
    latency_p99_slo_ms: Positive | None = None
    min_throughput_samples_per_s: Positive | None = None
    max_price_usd: Positive | None = None
    precisions: list[Precision] | None = None
    runtimes: list[Name] | None = None


class Scope(StrEnum):
    owned = "owned"
    catalog = "catalog"


class WorkloadSpec(Strict):
    """What a user asks the recommender: a workload, its task and batch, an objective and limits."""

    workload: Name | None = None
    custom: CustomWorkload | None = None
    task: Task = Task.infer
    batch_size: int | None = Field(default=None, ge=1, le=100_000_000, description="Unset: the recommender picks.")
    objective: Objective = Objective.throughput
    constraints: Constraints = Field(default_factory=Constraints)
    scope: Scope = Scope.owned
    electricity_usd_per_kwh: NonNegative = Field(default=0.15, le=10, description="For cost per million samples.")
    amortisation_years: float = Field(default=3.0, ge=0.1, le=20, description="Hardware price spread over this life.")
    limit: int = Field(default=50, ge=1, le=1000, description="At most this many ranked candidates.")

    @property
    def workload_name(self) -> str:
        """The result name the lab's measurements use: 'bert_base/infer'."""
        name = self.workload if self.workload is not None else self.custom.name  # type: ignore[union-attr]
        return f"{name}/{self.task.value}"

    @model_validator(mode="after")
    def _one_workload(self) -> WorkloadSpec:
        if (self.workload is None) == (self.custom is None):
            raise ValueError("give exactly one of workload (a zoo name) or custom")
        return self


class EstimateKind(StrEnum):
    measured = "measured"
    interpolated = "interpolated"
    predicted = "predicted"


class PowerBasis(StrEnum):
    measured = "measured"
    transferred = "transferred"
    tdp = "tdp"
    capped = "capped"


class HardwareRef(Strict):
    """A device the lab owns (machine_id + device) or catalog hardware nobody here owns yet (catalog_id only)."""

    name: str
    kind: DeviceKind
    owned: bool
    catalog_id: str | None = None
    machine_id: uuid.UUID | None = None
    machine_name: str | None = None
    device: DeviceId | None = None


class Estimate(Strict):
    """A throughput with its kind and error band; power with where it came from."""

    kind: EstimateKind
    source: str = Field(description="'lab' (this lab's measurements), 'public:...' or 'model' (specs alone).")
    throughput_samples_per_s: Positive
    throughput_low: NonNegative
    throughput_high: NonNegative
    error_pct: NonNegative = Field(description="Half-width of the band, percent of the throughput.")
    latency_p99_ms: NonNegative | None = None
    power_w: NonNegative | None = None
    power_basis: PowerBasis | None = None
    power_cap_w: Positive | None = None
    references: list[str] = Field(default_factory=list, description="Hardware a prediction was transferred from.")
    explanation: str


class CandidateConfig(Strict):
    hardware: HardwareRef
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1)
    threads: int | None = None


class Candidate(CandidateConfig):
    rank: int = Field(ge=1)
    estimate: Estimate
    throughput_per_w: NonNegative | None = None
    energy_per_sample_j: NonNegative | None = None
    price_usd: NonNegative | None = None
    cost_per_million_samples_usd: NonNegative | None = None
    system_throughput_samples_per_s: NonNegative
    system_power_w: NonNegative | None = None
    pareto: bool = Field(description="On the front of throughput vs power: nothing else is faster for less power.")


class Rejection(CandidateConfig):
    estimate: Estimate
    reasons: list[str]


class Recommendation(Strict):
    query: WorkloadSpec
    candidates: list[Candidate]
    rejected: list[Rejection]
    notes: list[str] = Field(default_factory=list)


class PredictionRequest(Strict):
    """One hardware and one config: catalog_id, or machine_id with device, for a workload."""

    catalog_id: Name | None = None
    machine_id: uuid.UUID | None = None
    device: DeviceId | None = None
    workload: WorkloadName | None = None
    custom: CustomWorkload | None = None
    task: Task = Task.infer
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1, le=1_000_000)
    threads: int | None = Field(default=None, ge=1, le=4096)

    @model_validator(mode="after")
    def _one_hardware_and_workload(self) -> PredictionRequest:
        if (self.catalog_id is None) == (self.machine_id is None):
            raise ValueError("give exactly one of catalog_id or machine_id (with device)")
        if (self.workload is None) == (self.custom is None):
            raise ValueError("give exactly one of workload (a zoo name) or custom")
        return self

    @property
    def workload_name(self) -> str:
        name = self.workload if self.workload is not None else self.custom.name  # type: ignore[union-attr]
        return name if "/" in name else f"{name}/{self.task.value}"


class PublicResult(Strict):
    """A measured result someone else published; kept apart from the lab's under source 'public:...'."""

    source: Annotated[str, Field(pattern=r"^public:[a-z0-9][a-z0-9_.\-]{0,60}$")]
    hardware_id: Name
    hardware_name: Label
    workload: WorkloadName
    unit: Annotated[str, Field(max_length=32)] = "samples/s"
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1, le=100_000_000, description="Recommendation models (NCF) use millions.")
    devices: int = Field(default=1, ge=1, le=1024)
    throughput_samples_per_s: Positive = Field(description="For all the devices together.")
    latency_p99_ms: Positive | None = None
    mean_power_w: Positive | None = None
    note: Text | None = None


class PublicImportReport(Strict):
    imported: int
    source: str


Peak = Annotated[float, Field(ge=0.001, le=1e6, description="TFLOP/s (int8: TOP/s), dense.")]
Watts = Annotated[float, Field(ge=1, le=100_000)]


class CatalogPatch(Strict):
    """Fields a user may set on a catalog entry (their own price quote, a spec the datasets lack)."""

    kind: Literal["gpu", "cpu"] | None = None
    vendor: Label | None = None
    name: Label | None = None
    peak_fp32_tflops: Peak | None = None
    peak_tf32_tflops: Peak | None = None
    peak_bf16_tflops: Peak | None = None
    peak_fp16_tflops: Peak | None = None
    peak_int8_tops: Peak | None = None
    memory_gb: Annotated[float, Field(ge=0.001, le=1e6)] | None = None
    memory_bandwidth_gb_s: Annotated[float, Field(ge=0.1, le=1e6)] | None = None
    tdp_w: Watts | None = None
    power_limit_min_w: Watts | None = None
    power_limit_max_w: Watts | None = None
    price_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    note: Text | None = None

    @model_validator(mode="after")
    def _names_are_not_null(self) -> CatalogPatch:
        for name in ("kind", "vendor", "name"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null (leave it out to keep it)")
        return self


_PROBLEM_WORD = re.compile(r"[^a-z0-9]+")


class Problem(Strict):
    """The JSON body of every API error (RFC 9457 in spirit)."""

    type: str
    title: str
    status: int
    detail: str
    errors: list[dict[str, object]] | None = None
    request_id: str | None = None


def problem_type(title: str) -> str:
    return "urn:hwadvisor:" + _PROBLEM_WORD.sub("-", title.lower()).strip("-")
