"""SQLAlchemy 2 typed models. Alembic (migrations/) is the only thing that creates this schema."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    Uuid,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite hands back naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# SQLite only autoincrements INTEGER PRIMARY KEY; PostgreSQL gets a 64-bit key for results.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON(), uuid.UUID: Uuid()}


class Machine(Base):
    __tablename__ = "machines"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    hostname: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    agent_state: Mapped[str | None] = mapped_column(String(16))
    """What the agent last said it is doing (idle, running, busy); status shown to people derives from it."""
    labels: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime | None]
    retired_at: Mapped[datetime | None]

    devices: Mapped[list[DeviceRow]] = relationship(
        back_populates="machine", cascade="all, delete-orphan", order_by="DeviceRow.device_id"
    )
    catalog_pins: Mapped[list[CatalogPinRow]] = relationship(
        cascade="all, delete-orphan", order_by="CatalogPinRow.device"
    )

    @property
    def hardware(self) -> str | None:
        """'2 x NVIDIA H100 80GB HBM3 + Intel Xeon ...': GPUs by name with their count, then the CPU."""
        gpus: dict[str, int] = {}
        cpus = []
        for device in self.devices:
            if device.kind == "cpu":
                cpus.append(device.name)
            else:
                gpus[device.name] = gpus.get(device.name, 0) + 1
        parts = [f"{n} x {name}" if n > 1 else name for name, n in sorted(gpus.items())] + cpus
        return " + ".join(parts) or None


class SpecSnapshot(Base):
    """A MachineSpec as it was when a run was measured; a new one is kept only when the spec changes."""

    __tablename__ = "spec_snapshots"
    __table_args__ = (UniqueConstraint("machine_id", "spec_hash"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), index=True)
    spec_hash: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class DeviceRow(Base):
    __tablename__ = "devices"
    __table_args__ = (UniqueConstraint("machine_id", "device_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"))
    device_id: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(8))
    name: Mapped[str] = mapped_column(String(200))
    uuid: Mapped[str | None] = mapped_column(String(200))
    memory_total_mb: Mapped[float | None] = mapped_column(Float)
    catalog_id: Mapped[str | None] = mapped_column(String(64), index=True)
    isa_features: Mapped[str | None] = mapped_column(Text)
    """A CPU's ISA features as its probe listed them, space-separated (app/catalog/probed.py bounds its
    part's peaks by them); None for a GPU, and for a CPU whose spec predates the column."""

    machine: Mapped[Machine] = relationship(back_populates="devices")


class CatalogPinRow(Base):
    """An admin's choice of catalog entry for one device of a machine. Kept apart from the device
    rows, which each new spec rewrites: the pin outlives them, and wins over the automatic match."""

    __tablename__ = "catalog_pins"

    machine_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), primary_key=True)
    device: Mapped[str] = mapped_column(String(16), primary_key=True)
    catalog_id: Mapped[str] = mapped_column(String(64))
    pinned_by: Mapped[str] = mapped_column(String(200))
    pinned_at: Mapped[datetime] = mapped_column(default=utcnow)


class ClusterRow(Base):
    """Machines a lab declares to form one cluster, and the network between them (per device and
    direction, GB/s): what a plan over several machines crosses, and what a run over them measured."""

    __tablename__ = "clusters"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    network_gb_s: Mapped[float] = mapped_column(Float)
    interconnect: Mapped[str | None] = mapped_column(String(200))
    """In words: '100 GbE RoCE', 'InfiniBand NDR'."""
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    members: Mapped[list[ClusterMemberRow]] = relationship(
        cascade="all, delete-orphan", order_by="ClusterMemberRow.machine_id", lazy="selectin"
    )


class ClusterMemberRow(Base):
    __tablename__ = "cluster_members"

    cluster: Mapped[str] = mapped_column(ForeignKey("clusters.name", ondelete="CASCADE"), primary_key=True)
    machine_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), primary_key=True)

    machine: Mapped[Machine] = relationship(lazy="selectin")


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    machine_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), index=True)
    spec_snapshot_id: Mapped[int] = mapped_column(ForeignKey("spec_snapshots.id"))
    job_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"), index=True)
    suite: Mapped[str] = mapped_column(String(64))
    agent_version: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime]
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    result_count: Mapped[int] = mapped_column(Integer)

    @property
    def run_id(self) -> uuid.UUID:
        """The name RunRead gives the id (the agent made it: it is the run's idempotency key)."""
        return self.id


class ResultRow(Base):
    __tablename__ = "results"
    __table_args__ = (
        Index("ix_results_config", "workload", "runtime", "precision", "batch_size"),
        Index("ix_results_machine_workload", "machine_id", "workload"),
        Index("ix_results_devices", "devices"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    machine_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"))
    workload: Mapped[str] = mapped_column(String(64))
    task: Mapped[str | None] = mapped_column(String(8))
    """infer, train, prefill or decode; NULL for primitives (gemm_2048), which have no task."""
    runtime: Mapped[str] = mapped_column(String(64))
    device: Mapped[str] = mapped_column(String(16))
    device_kind: Mapped[str] = mapped_column(String(8), index=True)
    precision: Mapped[str] = mapped_column(String(8))
    batch_size: Mapped[int] = mapped_column(Integer)
    threads: Mapped[int | None] = mapped_column(Integer)
    devices: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    """Data-parallel ranks measured together; rows from before revision 0008 are of one device."""
    nodes: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    """Machines those ranks ran on; rows from before revision 0009 ran on one."""
    cluster: Mapped[str | None] = mapped_column(String(64))
    """The declared cluster whose network a run over several machines crossed."""
    variant: Mapped[str | None] = mapped_column(String(32))
    """The model variant measured (int8-static, pruned-50); NULL is the original model, as every row
    from before revision 0010 is."""
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    throughput_samples_per_s: Mapped[float | None] = mapped_column(Float)
    latency_p50_ms: Mapped[float | None] = mapped_column(Float)
    latency_p90_ms: Mapped[float | None] = mapped_column(Float)
    latency_p99_ms: Mapped[float | None] = mapped_column(Float)
    latency_mean_ms: Mapped[float | None] = mapped_column(Float)
    latency_ci95_low_ms: Mapped[float | None] = mapped_column(Float)
    latency_ci95_high_ms: Mapped[float | None] = mapped_column(Float)
    cv: Mapped[float | None] = mapped_column(Float)
    iterations: Mapped[int | None] = mapped_column(Integer)
    stable: Mapped[bool | None] = mapped_column(Boolean)
    peak_memory_mb: Mapped[float | None] = mapped_column(Float)
    mean_power_w: Mapped[float | None] = mapped_column(Float)
    energy_per_sample_j: Mapped[float | None] = mapped_column(Float)
    power_source: Mapped[str] = mapped_column(String(16))
    achieved_tflops: Mapped[float | None] = mapped_column(Float)
    bandwidth_gb_per_s: Mapped[float | None] = mapped_column(Float)
    compile_time_s: Mapped[float | None] = mapped_column(Float)
    scaling_efficiency: Mapped[float | None] = mapped_column(Float)
    context_tokens: Mapped[int | None] = mapped_column(Integer)
    """Language models (revision 0011): prompt, KV-cache or training sequence length; NULL for the rest."""
    throughput_tokens_per_s: Mapped[float | None] = mapped_column(Float)
    energy_per_token_j: Mapped[float | None] = mapped_column(Float)
    kv_cache_mb: Mapped[float | None] = mapped_column(Float)

    machine: Mapped[Machine] = relationship(lazy="raise")
    """Read with the row by a join (contains_eager) when wanted; never loaded one row at a time."""

    @property
    def hostname(self) -> str:
        return self.machine.hostname


class JobRow(Base):
    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_created", "status", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    suite: Mapped[str] = mapped_column(String(64))
    suite_toml: Mapped[str | None] = mapped_column(Text)
    machine_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"))
    selector: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    configs_done: Mapped[int] = mapped_column(Integer, default=0)
    configs_total: Mapped[int | None] = mapped_column(Integer)
    claimed_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("machines.id", ondelete="SET NULL"))
    lease_expires_at: Mapped[datetime | None]
    message: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class TokenRow(Base):
    """A bearer token, stored as the SHA-256 of its secret; the id is public and picks the row."""

    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), index=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    note: Mapped[str] = mapped_column(String(200), default="")
    machine_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]
    uses: Mapped[int] = mapped_column(Integer, default=0)
    max_uses: Mapped[int | None] = mapped_column(Integer)
    awaiting_approval: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """A machine token from a re-enrolment that could not prove it is the machine's agent: it works
    only once an admin approves it, which revokes the machine's other tokens."""


class SessionRow(Base):
    """A dashboard login. The cookie holds ``hws_<id>.<secret>``, only the secret's SHA-256 is stored;
    it stands for the token logged in with and ends with it (revoked, expired), at logout, or at
    ``expires_at``. A login with the environment's admin token keeps a short digest of that token, so
    changing HWADVISOR_ADMIN_TOKEN ends those sessions."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    token_id: Mapped[str | None] = mapped_column(ForeignKey("tokens.id", ondelete="CASCADE"), index=True)
    env_admin_digest: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(index=True)


class CatalogEntry(Base):
    """A piece of hardware anyone may buy: specs from public sources, fields a user may override."""

    __tablename__ = "catalog_entries"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    vendor: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    specs: Mapped[dict[str, Any]] = mapped_column(default=dict)
    overrides: Mapped[dict[str, Any]] = mapped_column(default=dict)
    source: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class PublicResultRow(Base):
    """A result someone else published, imported by a user (the shipped ones live in the package)."""

    __tablename__ = "public_results"
    __table_args__ = (Index("ix_public_results_workload", "workload"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(80), index=True)
    hardware_id: Mapped[str] = mapped_column(String(64))
    hardware_name: Mapped[str] = mapped_column(String(200))
    workload: Mapped[str] = mapped_column(String(64))
    task: Mapped[str | None] = mapped_column(String(8))
    unit: Mapped[str] = mapped_column(String(32))
    runtime: Mapped[str] = mapped_column(String(64))
    precision: Mapped[str] = mapped_column(String(8))
    batch_size: Mapped[int] = mapped_column(Integer)
    devices: Mapped[int] = mapped_column(Integer)
    throughput_samples_per_s: Mapped[float] = mapped_column(Float)
    latency_p99_ms: Mapped[float | None] = mapped_column(Float)
    mean_power_w: Mapped[float | None] = mapped_column(Float)
    note: Mapped[str | None] = mapped_column(Text)
    imported_at: Mapped[datetime] = mapped_column(default=utcnow)


class RateLimitRow(Base):
    """Failed authentication attempts per client and time window, shared by every server worker."""

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)  # ratelimit.KEY_LENGTH
    bucket: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
