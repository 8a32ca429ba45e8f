"""Run ingest: a run and all its results in one transaction, idempotent by run id."""

from __future__ import annotations

import uuid
from typing import Any, cast

from sqlalchemy import Table, insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.contracts import MachineStatus, Result, RunRead, RunReport, device_kind_of
from app.db import jobs, machines
from app.db.engine import Database
from app.db.models import JobRow, Machine, ResultRow, Run, utcnow
from app.errors import ConflictError, ForbiddenError, NotFoundError

RESULTS_TABLE = cast(Table, ResultRow.__table__)
WRITABLE_STATUSES = {MachineStatus.online.value, MachineStatus.busy.value, MachineStatus.offline.value}


def to_read(run: Run) -> RunRead:
    return RunRead.model_validate(run, from_attributes=True)


def get(session: Session, run_id: uuid.UUID) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise NotFoundError(f"no run with id {run_id}")
    return run


def ingest(db: Database, *, machine_id: uuid.UUID, report: RunReport) -> tuple[RunRead, bool]:
    """Store the report for the machine; (the stored run, whether it was new).

    A run id already stored for this machine answers with what is stored and changes nothing (an
    agent's retry); a concurrent duplicate loses the primary-key race and is answered the same way. A
    report under a stored run id that is not that run (another suite, other times, another number of
    results) is refused: answering it as stored would tell its sender its results were kept."""
    with db.reading() as session:
        existing = session.get(Run, report.run_id)
        if existing is not None:
            return _stored(existing, machine_id, report), False
    try:
        with db.writing() as session:
            return _insert(session, machine_id=machine_id, report=report), True
    except IntegrityError:
        with db.reading() as session:
            existing = session.get(Run, report.run_id)
            if existing is None:
                raise
            return _stored(existing, machine_id, report), False


def _stored(run: Run, machine_id: uuid.UUID, report: RunReport) -> RunRead:
    if run.machine_id != machine_id:
        raise ForbiddenError(f"run {run.id} belongs to another machine")
    stored = to_read(run)
    same_times = all(
        abs((a - b).total_seconds()) < 1
        for a, b in ((stored.started_at, report.started_at), (stored.finished_at, report.finished_at))
    )
    if stored.suite != report.suite or stored.result_count != len(report.results) or not same_times:
        raise ConflictError(
            f"run {run.id} is stored already as another run ({stored.suite}, {stored.result_count} results, "
            f"started {stored.started_at:%Y-%m-%d %H:%M:%S})",
            hint="a new run needs a new run_id; the agent makes one per run",
        )
    return stored


def _insert(session: Session, *, machine_id: uuid.UUID, report: RunReport) -> RunRead:
    machine = machines.get(session, machine_id)
    _check_writable(machine)
    if report.job_id is not None:
        _check_job(session, report.job_id, machine)
    snapshot = machines.record_spec(session, machine, report.machine)
    now = utcnow()
    machine.last_seen_at = now
    run = Run(
        id=report.run_id,
        machine_id=machine.id,
        spec_snapshot_id=snapshot.id,
        job_id=report.job_id,
        suite=report.suite,
        agent_version=report.agent_version,
        started_at=report.started_at,
        finished_at=report.finished_at,
        received_at=now,
        result_count=len(report.results),
    )
    session.add(run)
    session.flush()
    if report.results:
        # Core executemany on the table: the ORM bulk path costs about as much again per row.
        session.connection().execute(
            insert(RESULTS_TABLE), [_result_row(run.id, machine.id, r) for r in report.results]
        )
    return to_read(run)


def _result_row(run_id: uuid.UUID, machine_id: uuid.UUID, result: Result) -> dict[str, Any]:
    row: dict[str, Any] = result.model_dump(mode="json")
    row["run_id"] = run_id
    row["machine_id"] = machine_id
    row["device_kind"] = device_kind_of(result.device).value
    return row


def _check_job(session: Session, job_id: uuid.UUID, machine: Machine) -> None:
    """A run may name a job this machine holds or held, one meant for it, or an unclaimed one its
    labels match (its lease lapsed while it measured); never a job of another machine."""
    job = session.get(JobRow, job_id)
    if job is None:
        raise ConflictError(f"run names job {job_id}, which does not exist")
    if machine.id in (job.claimed_by, job.machine_id):
        return
    if job.claimed_by is None and job.machine_id is None and jobs.matches(job.selector, machine.labels):
        return
    raise ForbiddenError(f"run names job {job_id}, which belongs to another machine")


def _check_writable(machine: Machine) -> None:
    if machine.status == MachineStatus.pending.value:
        raise ForbiddenError(
            f"machine {machine.id} is pending approval",
            hint=f"an admin approves it with `hwadvisor machines approve {machine.id}`",
        )
    if machine.status not in WRITABLE_STATUSES:
        raise ForbiddenError(f"machine {machine.id} is {machine.status} and may not upload runs")
