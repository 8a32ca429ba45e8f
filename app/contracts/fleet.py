"""Machines, enrolment, tokens, sessions, jobs and heartbeats: the fleet's wire models."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from app.contracts.common import (
    INT32_MAX,
    PLAIN_LINE,
    DeviceId,
    Label,
    Name,
    Strict,
    Text,
)
from app.contracts.machine import (
    MachineSpec,
)
from app.contracts.suites import SuiteToml

# --------------------------------------------------------------------------- machines & auth


class MachineStatus(StrEnum):
    pending = "pending"
    online = "online"
    busy = "busy"
    offline = "offline"
    retired = "retired"


LABELS_MAX = 64
"""Labels on a machine, and keys in a job's selector (which matches labels)."""
LabelKey = Annotated[str, Field(min_length=1, max_length=64), PLAIN_LINE]
LabelValue = Annotated[str, Field(max_length=200), PLAIN_LINE]
Labels = Annotated[dict[LabelKey, LabelValue], Field(max_length=LABELS_MAX)]


class CatalogPinCreate(Strict):
    """An admin's choice of catalog entry for a device the server cannot match itself (a hypervisor's
    generic CPU name such as 'AMD EPYC', a vGPU's name): it holds until cleared, whatever the
    machine reports later."""

    catalog_id: Name
    device: DeviceId | None = Field(
        default=None,
        description="cpu or cuda:N. Unset: the CPU for a CPU entry; for a GPU entry, the machine's GPUs when "
        "they all report one name.",
    )


class CatalogPin(Strict):
    """A device of a machine pinned to a catalog entry: by whom and when."""

    device: DeviceId
    catalog_id: str
    pinned_by: str
    pinned_at: datetime


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
    catalog_pins: list[CatalogPin] = Field(
        default_factory=list,
        description="Devices an admin pinned to a catalog entry; they win over the automatic match "
        "(the spec's devices show the pinned entry, and why).",
    )


class ClusterCreate(Strict):
    """Machines that form one cluster, and the network between them."""

    name: Name
    machines: list[uuid.UUID] = Field(min_length=2, max_length=10_000, description="Machine ids, each once.")
    network_gb_s: float = Field(
        gt=0,
        le=10_000,
        description="Per device and direction between machines, GB/s: 12.5 for 100 GbE, 25 for 200 Gb/s InfiniBand.",
    )
    interconnect: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        default=None, description="In words: '100 GbE RoCE', 'InfiniBand NDR'."
    )

    @model_validator(mode="after")
    def _each_machine_once(self) -> ClusterCreate:
        if len(set(self.machines)) != len(self.machines):
            raise ValueError("a machine is listed twice: name each member once")
        return self


class ClusterMember(Strict):
    machine_id: uuid.UUID
    hostname: str
    status: MachineStatus
    gpus: int = Field(ge=0, description="Its GPUs; a machine without one is a device of its own (its CPU).")
    hardware: str | None = None


class ClusterRead(Strict):
    name: Name
    network_gb_s: float
    interconnect: str | None
    machines: list[ClusterMember]
    devices: int = Field(description="Every member's GPUs (a CPU-only member counts as one device).")
    devices_per_system: int = Field(description="The most devices one member holds: a ring inside it needs no network.")
    created_by: str
    created_at: datetime


class EnrollRequest(Strict):
    spec: MachineSpec
    machine_token: Annotated[str, Field(max_length=400)] | None = Field(
        default=None,
        description="When re-enrolling an approved machine: its current machine token, which proves this is "
        "its agent. Without it the new token awaits an admin's approval (status pending).",
    )


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
    note: Annotated[str, Field(max_length=200), PLAIN_LINE] = ""
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
    awaiting_approval: bool = Field(
        default=False, description="A machine token from a re-enrolment; it works once an admin approves the machine."
    )


class TokenIssued(TokenRead):
    token: str = Field(description="The secret; shown once, stored only as a hash.")


# --------------------------------------------------------------------------- jobs & asks


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"


Selector = Annotated[
    dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=200)]], Field(max_length=LABELS_MAX)
]
BUILT_IN_SUITES = ("quick", "standard", "full")


def _require_target(machine_id: uuid.UUID | None, selector: dict[str, str]) -> None:
    if machine_id is None and not selector:
        raise ValueError("a job needs a machine_id or a label selector (e.g. {'gpu': 'h100-sxm5-80gb'})")


class JobCreate(Strict):
    """Run a suite on one machine, or on every machine whose labels match the selector (one of them)."""

    suite: Name = Field(description="A built-in suite (quick, standard, full), or the name of suite_toml.")
    suite_toml: SuiteToml | None = Field(default=None, description="A suite file's text, for a suite of your own.")
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
    lease_s: float | None = Field(
        default=None,
        gt=0,
        description="In a claim's or progress report's answer: how long the lease lasts without progress, seconds; "
        "the agent renews it well within this while a long config runs.",
    )
    message: Text | None = None
    notes: list[Text] = Field(
        default_factory=list,
        max_length=32,
        description="In the answer to POST /jobs: what no machine can run in the suite (a workload or runtime no "
        "plug-in here has, a task a runtime does not run...), each reason once; an agent records those configs "
        "unsupported. Not stored: other answers leave it empty.",
    )
    measured: list[Label] = Field(
        default_factory=list,
        description="In a claim's answer: the configs (their labels) this machine already measured for the job in an "
        "earlier attempt and the server holds; the agent resumes the job and measures the rest.",
    )

    @model_validator(mode="after")
    def _has_a_target(self) -> Job:
        _require_target(self.machine_id, self.selector)
        return self


# --------------------------------------------------------------------------- suites


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

    @model_validator(mode="after")
    def _done_within_total(self) -> JobProgress:
        if self.configs_total is not None and self.configs_done > self.configs_total:
            raise ValueError(f"configs_done ({self.configs_done}) is more than configs_total ({self.configs_total})")
        return self


class JobFinish(Strict):
    """done or failed; queued hands the job back (an agent told to stop mid-job), to be run again."""

    status: Literal[JobStatus.done, JobStatus.failed, JobStatus.queued]
    message: Text | None = None


class MachineLabels(Strict):
    labels: Labels
