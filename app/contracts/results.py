"""Results and runs: what the agent uploads and what queries read back."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, ClassVar

from pydantic import Field, computed_field, field_validator, model_validator

from app.contracts.common import (
    INT32_MAX,
    ORIGINAL,
    DeviceId,
    DeviceKind,
    Name,
    NonNegative,
    PowerSource,
    Precision,
    ResultStatus,
    Strict,
    Task,
    Text,
    Timestamp,
    VariantName,
    WorkloadName,
    device_kind_of,
)
from app.contracts.machine import (
    MachineSpec,
)

# A measured figure is bounded by what any machine could measure, orders of magnitude to spare: past
# these an upload is broken or hostile, and every estimate calibrated on it (the lab's ratio to the
# model spreads over the catalog) would be nonsense or overflow.
RATE_MAX = 1e9
SCALING_MAX = 2.0
"""A data-parallel run's scaling efficiency above twice linear is a broken measurement."""
Rate = Annotated[float, Field(ge=0, le=RATE_MAX)]
"""Samples or tokens a second."""
Milliseconds = Annotated[float, Field(ge=0, le=8.64e7)]
"""Up to a day."""
Watts = Annotated[float, Field(ge=0, le=1e5)]
Joules = Annotated[float, Field(ge=0, le=1e9)]
Megabytes = Annotated[float, Field(ge=0, le=1e9)]
"""Up to a petabyte."""


def split_legacy_workload(data: Any) -> Any:
    """Older agents and published tables write the task into the name ('resnet50/infer'): split it
    into workload and task, so the stored workload is always the bare name. A task given both ways
    must agree."""
    if not isinstance(data, dict) or not isinstance(data.get("workload"), str) or "/" not in data["workload"]:
        return data
    name, _, task = data["workload"].partition("/")
    given = data.get("task")
    if given is not None and str(given) != task:
        raise ValueError(f"workload {data['workload']!r} names task {task!r}, but task is {given!r}")
    return {**data, "workload": name, "task": task}


def workload_label(workload: str, task: Task | str | None) -> str:
    """How people read a (workload, task) pair: 'resnet50/infer'; a primitive is its name ('gemm_2048').
    For display only: nothing parses it back."""
    return workload if task is None else f"{workload}/{Task(task).value}"


class Result(Strict):
    """The measurement of one config on one machine."""

    workload: WorkloadName = Field(description="The bare name: 'resnet50' ('resnet50/infer' is read as the task too).")
    task: Task | None = Field(
        default=None, description="infer, train, prefill or decode; none for primitives (gemm_2048)."
    )
    runtime: Name
    device: DeviceId
    precision: Precision
    batch_size: int = Field(ge=1, le=1_000_000)
    threads: int | None = Field(default=None, ge=1, le=4096, description="Per process (per device's rank).")
    devices: int = Field(
        default=1,
        ge=1,
        le=1024,
        description="Devices measured together (data-parallel ranks); throughput is theirs together. "
        "Results without it are of one device.",
    )
    nodes: int = Field(
        default=1,
        ge=1,
        le=1024,
        description="Machines the devices ran on (data-parallel over a declared cluster); "
        "results without it ran on one.",
    )
    cluster: Name | None = Field(
        default=None,
        description="The declared cluster (hwadvisor clusters create) whose network a run over several "
        "machines crossed.",
    )
    variant: VariantName | None = Field(
        default=None,
        description="The optimised form of the workload measured (int8-static, pruned-50, lowrank-25: "
        "GET /api/v1/registry lists them); none is the original model, as every result without it is. "
        "A variant's figures are speed only: its accuracy was not measured (random weights).",
    )
    status: ResultStatus
    reason: Text | None = None
    throughput_samples_per_s: Rate | None = None
    latency_p50_ms: Milliseconds | None = None
    latency_p90_ms: Milliseconds | None = None
    latency_p99_ms: Milliseconds | None = None
    latency_mean_ms: Milliseconds | None = None
    latency_ci95_low_ms: Milliseconds | None = None
    latency_ci95_high_ms: Milliseconds | None = None
    cv: NonNegative | None = Field(default=None, le=1e3, description="Coefficient of variation of step times.")
    iterations: int | None = Field(default=None, ge=1, le=INT32_MAX)
    stable: bool | None = None
    peak_memory_mb: Megabytes | None = None
    mean_power_w: Watts | None = None
    energy_per_sample_j: Joules | None = None
    power_source: PowerSource = PowerSource.none
    achieved_tflops: NonNegative | None = Field(default=None, le=1e5, description="For GEMM primitives.")
    bandwidth_gb_per_s: NonNegative | None = Field(default=None, le=1e6, description="For copy primitives.")
    compile_time_s: NonNegative | None = Field(default=None, le=1e6)
    scaling_efficiency: NonNegative | None = Field(
        default=None,
        le=SCALING_MAX,
        description="Data-parallel: throughput / (devices x one device's throughput, measured in the same run); "
        "above 2 (twice linear) is a broken measurement.",
    )
    context_tokens: int | None = Field(
        default=None,
        ge=1,
        le=INT32_MAX,
        description="Language models: the prompt's length (prefill), the tokens in the KV cache when each token "
        "is generated (decode), the sequence length (train). For prefill the latency is the time to first token, "
        "for decode the time per output token.",
    )
    throughput_tokens_per_s: Rate | None = Field(
        default=None,
        description="Language models: tokens processed per second, all sequences together (prefill: prompt "
        "tokens; decode: generated tokens; train: trained tokens).",
    )
    energy_per_token_j: Joules | None = None
    kv_cache_mb: Megabytes | None = Field(
        default=None,
        description="Language models: the KV cache the step holds (layers x 2 x kv-heads x head "
        "width x context x batch x bytes), included in peak_memory_mb.",
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_workload(cls, data: Any) -> Any:
        return split_legacy_workload(data)

    @field_validator("variant", mode="before")
    @classmethod
    def _original_is_none(cls, value: Any) -> Any:
        """'none' (a suite's word for the original model) is stored as no variant."""
        return None if value == ORIGINAL else value

    @model_validator(mode="after")
    def _status_is_consistent(self) -> Result:
        if self.status is ResultStatus.ok:
            if self.throughput_samples_per_s is None or self.latency_p50_ms is None:
                raise ValueError("an ok result needs throughput_samples_per_s and latency_p50_ms")
            if self.iterations is None:
                raise ValueError("an ok result needs iterations")
            if self.throughput_samples_per_s == 0 or self.latency_p50_ms == 0:
                raise ValueError("an ok result measured something: its throughput and latency are above 0")
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
        if self.nodes > self.devices:
            raise ValueError(f"nodes ({self.nodes}) is more than devices ({self.devices}): each machine runs a device")
        return self


class RunReport(Strict):
    """One execution of a suite on one machine. run_id is made by the agent and is the idempotency key."""

    run_id: uuid.UUID
    suite: Name
    job_id: uuid.UUID | None = None
    started_at: Timestamp
    finished_at: Timestamp
    agent_version: Annotated[str, Field(max_length=32)]
    machine: MachineSpec
    results: list[Result] = Field(max_length=100_000)

    @model_validator(mode="after")
    def _times_in_order(self) -> RunReport:
        if self.finished_at < self.started_at:
            raise ValueError("finished_at is before started_at")
        devices = {d.id for d in self.machine.devices}
        if stray := sorted({r.device for r in self.results} - devices):
            raise ValueError(f"results name device(s) {', '.join(stray)}, which the machine spec does not list")
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
    refuses_nul: ClassVar[bool] = False
    """Built from the database, where every text came in as a Result that refused a NUL: checking each
    string again was a third of an export's time per row."""

    id: int
    run_id: uuid.UUID
    machine_id: uuid.UUID
    hostname: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def device_kind(self) -> DeviceKind:
        return device_kind_of(self.device)
