"""What the recommender reads from the database: the fleet's devices and the lab's measurements of
one (workload, task). Plain rows, not ORM objects: a fleet answer reads 100,000 results and more."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple, cast

from sqlalchemy import Select, String, func, or_, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.orm import Session

from app.catalog.published import shipped as shipped_public
from app.contracts import ResultStatus, Task
from app.contracts.llm import STANDARD_CONTEXT
from app.contracts.results import RATE_MAX, SCALING_MAX
from app.db.models import CatalogEntry, DeviceRow, Machine, PublicResultRow, ResultRow, Run


class OwnedDevice(NamedTuple):
    machine_id: uuid.UUID
    hostname: str
    device_id: str
    kind: str
    name: str
    catalog_id: str | None
    isa_features: str | None
    """A CPU's, space-separated, as its probe listed them (DeviceRow.isa_features)."""


class LabMeasurement(NamedTuple):
    """One ok result's figures the estimators use."""

    machine_id: uuid.UUID
    device: str
    runtime: str
    precision: str
    batch_size: int
    threads: int | None
    throughput_samples_per_s: float | None
    latency_p50_ms: float | None
    latency_p99_ms: float | None
    latency_ci95_low_ms: float | None
    latency_ci95_high_ms: float | None
    mean_power_w: float | None
    power_source: str
    iterations: int | None
    variant: str | None
    """None: the original model."""


def _fleet(machine_id: Any) -> Select[Any]:
    """Every device of every machine that is not retired: its machine (``machine_id`` as selected),
    hostname, device id, kind, name, catalog id and ISA features."""
    return (
        select(
            machine_id,
            Machine.hostname,
            DeviceRow.device_id,
            DeviceRow.kind,
            DeviceRow.name,
            DeviceRow.catalog_id,
            DeviceRow.isa_features,
        )
        .join(Machine, Machine.id == DeviceRow.machine_id)
        .where(Machine.retired_at.is_(None))
    )


def owned_devices(session: Session) -> list[OwnedDevice]:
    """Every device of every machine that is not retired, by hostname and device."""
    rows = session.execute(_fleet(DeviceRow.machine_id).order_by(Machine.hostname, DeviceRow.device_id))
    return [OwnedDevice(*row) for row in rows]


def fleet_fingerprint(session: Session) -> frozenset[tuple[object, ...]]:
    """What ``owned_devices`` reads, as a set to compare: the machine ids as the database's text (no
    UUID parsing, no ordering), a third of the time for the fleet read on every ask."""
    rows = session.execute(_fleet(sql_cast(DeviceRow.machine_id, String)))
    return frozenset(tuple(row) for row in rows)


def lab_measurements(session: Session, workload: str, task: Task) -> Iterator[LabMeasurement]:
    """Every ok result of the workload and task on one device, oldest run first (so later ones
    replace earlier). A data-parallel result's throughput is several devices' together: it is not
    evidence of what one device does."""
    r = ResultRow
    rows = session.execute(
        select(
            r.machine_id,
            r.device,
            r.runtime,
            r.precision,
            r.batch_size,
            r.threads,
            r.throughput_samples_per_s,
            r.latency_p50_ms,
            r.latency_p99_ms,
            r.latency_ci95_low_ms,
            r.latency_ci95_high_ms,
            r.mean_power_w,
            r.power_source,
            r.iterations,
            r.variant,
        )
        .join(Run, Run.id == r.run_id)
        .where(r.workload == workload, r.task == task.value, r.status == ResultStatus.ok.value, r.devices == 1)
        # a figure the contract refuses now, stored before it did, is nobody's measurement
        .where(r.throughput_samples_per_s > 0, r.throughput_samples_per_s <= RATE_MAX)
        # a language model's result is evidence of its workload at the zoo's context only (its profile's)
        .where(or_(r.context_tokens.is_(None), r.context_tokens == STANDARD_CONTEXT))
        .order_by(Run.finished_at, r.id)
    )
    # SQLAlchemy's rows already are named tuples of these columns: no copy per row
    return cast(Iterator[LabMeasurement], iter(rows))


class LabParallelRun(NamedTuple):
    """One ok data-parallel training result: its figures and the catalog part of its first device."""

    machine_id: uuid.UUID
    device: str
    catalog_id: str | None
    workload: str
    precision: str
    batch_size: int
    devices: int
    throughput_samples_per_s: float
    scaling_efficiency: float
    cluster: str | None
    """The declared cluster a run over several machines crossed."""


def lab_parallel_runs(session: Session) -> list[LabParallelRun]:
    """Every ok data-parallel training result of a machine not retired, with its measured scaling
    efficiency, of any workload: what the lab's links did (app/perfmodel/lab_scaling.py), oldest first."""
    r = ResultRow
    rows = session.execute(
        select(
            r.machine_id,
            r.device,
            DeviceRow.catalog_id,
            r.workload,
            r.precision,
            r.batch_size,
            r.devices,
            r.throughput_samples_per_s,
            r.scaling_efficiency,
            r.cluster,
        )
        .join(Run, Run.id == r.run_id)
        .join(Machine, Machine.id == r.machine_id)
        .outerjoin(DeviceRow, (DeviceRow.machine_id == r.machine_id) & (DeviceRow.device_id == r.device))
        .where(
            Machine.retired_at.is_(None),
            r.devices > 1,
            r.task == Task.train.value,
            r.status == ResultStatus.ok.value,
            r.scaling_efficiency.is_not(None),
            r.scaling_efficiency <= SCALING_MAX,
            r.throughput_samples_per_s > 0,
            r.throughput_samples_per_s <= RATE_MAX,
        )
        .order_by(Run.finished_at, r.id)
    )
    return [LabParallelRun._make(row) for row in rows]


def answer_inputs(session: Session, workload: str | None) -> tuple[object, ...]:
    """A fingerprint of everything a recommendation of ``workload`` reads from this database, cheap
    enough to take on every ask (a few milliseconds for 1,000 machines): the database itself, the
    fleet's devices (retirement, pins and re-registration change them in place, so they are read
    whole), the workload's newest result (results are only ever added, and go only with their
    machine), the lab's catalog entries, and the imported published results (deleted and re-imported
    by source). ``workload`` None: no results (a custom workload reads none)."""
    newest = None
    if workload is not None:
        newest = session.scalar(select(func.max(ResultRow.id)).where(ResultRow.workload == workload))
    # any workload's data-parallel run calibrates its part's link (app/perfmodel/lab_scaling.py); id + 0
    # keeps SQLite off its max(rowid) shortcut, which walks every result back from the newest when no
    # run is data-parallel (31 ms for 100,000 results), and on ix_results_devices (under 1 ms)
    parallel = session.scalar(select(func.max(ResultRow.id + 0)).where(ResultRow.devices > 1))
    entries = session.execute(select(CatalogEntry.id, CatalogEntry.updated_at)).all()
    p = PublicResultRow
    public = session.execute(select(func.count(p.id), func.max(p.id), func.max(p.imported_at))).one()
    return (
        session.get_bind().engine.url.render_as_string(hide_password=True),
        fleet_fingerprint(session),
        newest,
        parallel,
        frozenset(tuple(row) for row in entries),
        tuple(public),
    )


def runtimes_named(session: Session) -> set[str]:
    """Every runtime a stored result names, of any workload: the lab's and the published (shipped and
    imported). Published stacks keep their own names (``pytorch-ngc``), which no runtime plug-in has."""
    lab = session.scalars(select(ResultRow.runtime).distinct())
    imported = session.scalars(select(PublicResultRow.runtime).distinct())
    return {*lab, *imported, *(r.runtime for r in shipped_public())}
