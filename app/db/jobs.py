"""Jobs: create, claim (atomically, with a lease), heartbeat, finish, cancel, and lease expiry.

A claim is one conditional UPDATE (status still 'queued') on a candidate row, so two agents can
never both win a job, on either backend; on PostgreSQL the candidates are also read with
``FOR UPDATE SKIP LOCKED`` so concurrent claimers pass over rows another claimer holds instead of
queueing behind it. A claim holds a lease that heartbeats extend; a job whose lease ran out goes
back to the queue (or fails after its last attempt) the next time anyone claims.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from app.bench.config import stored_label
from app.contracts import TEXT_MAX, Job, JobCreate, JobStatus, MachineStatus, Page
from app.db.models import JobRow, Machine, ResultRow, Run, utcnow
from app.errors import ConflictError, ForbiddenError, NotFoundError

CANDIDATES = 20
ACTIVE = (JobStatus.queued.value, JobStatus.running.value)


def to_job(row: JobRow) -> Job:
    return Job.model_validate(row, from_attributes=True)


def create(session: Session, body: JobCreate) -> JobRow:
    if body.machine_id is not None and session.get(Machine, body.machine_id) is None:
        raise NotFoundError(f"no machine with id {body.machine_id}")
    if body.suite_toml is not None:
        _check_suite(body.suite_toml)
    row = JobRow(
        suite=body.suite,
        suite_toml=body.suite_toml,
        machine_id=body.machine_id,
        selector=dict(body.selector),
        status=JobStatus.queued.value,
        attempts=0,
        max_attempts=body.max_attempts,
        configs_done=0,
    )
    session.add(row)
    session.flush()
    return row


def _check_suite(text: str) -> None:
    """A job's own suite must parse and validate here, not fail later on the agent."""
    import tomllib

    from app.contracts import SuiteSpec

    try:
        SuiteSpec.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ConflictError(f"suite_toml is not a valid suite: {exc}") from exc


def get(session: Session, job_id: uuid.UUID) -> JobRow:
    row = session.get(JobRow, job_id)
    if row is None:
        raise NotFoundError(f"no job with id {job_id}")
    return row


def page(session: Session, *, status: JobStatus | None, limit: int, offset: int) -> Page[Job]:
    query = select(JobRow)
    if status is not None:
        query = query.where(JobRow.status == status.value)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(JobRow.created_at.desc(), JobRow.id).limit(limit).offset(offset))
    return Page[Job](items=[to_job(r) for r in rows], total=total, limit=limit, offset=offset)


def cancel(session: Session, job_id: uuid.UUID) -> JobRow:
    row = get(session, job_id)
    if row.status in ACTIVE:
        row.status = JobStatus.cancelled.value
        row.message = "cancelled by an admin"
        row.lease_expires_at = None
    return row


def expire_leases(session: Session) -> int:
    """Requeue running jobs whose lease ran out; fail those that used their last attempt."""
    now = utcnow()
    expired = and_(JobRow.status == JobStatus.running.value, JobRow.lease_expires_at < now)
    failed = session.execute(
        update(JobRow)
        .where(expired, JobRow.attempts >= JobRow.max_attempts)
        .values(status=JobStatus.failed.value, message="lease expired on the last attempt", lease_expires_at=None)
    )
    requeued = session.execute(
        update(JobRow)
        .where(expired, JobRow.attempts < JobRow.max_attempts)
        .values(
            status=JobStatus.queued.value, claimed_by=None, lease_expires_at=None, message="lease expired; requeued"
        )
    )
    return int(failed.rowcount or 0) + int(requeued.rowcount or 0)  # type: ignore[attr-defined]


def matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """Whether a machine with ``labels`` has every label the selector names, at its value (compared as text:
    a label of 2 matches a selector's "2"). A label the machine lacks matches nothing, not even "None"."""
    return all(key in labels and str(labels[key]) == str(value) for key, value in selector.items())


def claim(session: Session, machine: Machine, *, lease: timedelta, postgres: bool) -> JobRow | None:
    """The oldest queued job for this machine, now running under a lease; None when there is none."""
    if machine.status not in (MachineStatus.online.value, MachineStatus.busy.value, MachineStatus.offline.value):
        pending = machine.status == MachineStatus.pending.value
        raise ForbiddenError(
            f"machine {machine.id} is {machine.status} and may not take jobs",
            hint=f"an admin approves it with `hwadvisor machines approve {machine.id}`" if pending else None,
        )
    expire_leases(session)
    for candidate in _candidates(session, machine, postgres=postgres):
        won = session.execute(
            update(JobRow)
            .where(JobRow.id == candidate.id, JobRow.status == JobStatus.queued.value)
            .values(
                status=JobStatus.running.value,
                claimed_by=machine.id,
                attempts=JobRow.attempts + 1,
                lease_expires_at=utcnow() + lease,
                configs_done=0,
                message=None,
            )
            .execution_options(synchronize_session=False)
        )
        if won.rowcount == 1:  # type: ignore[attr-defined]
            session.refresh(candidate)
            return candidate
    return None


def claimed(session: Session, row: JobRow) -> Job:
    """A claimed job as its agent gets it: on a later attempt, with the configs the claiming machine
    already measured for it in the runs the server holds, so the agent resumes rather than measures
    them again (an agent stopped at a maintenance window or a lent machine's time left them done)."""
    job = to_job(row)
    if row.attempts <= 1 or row.claimed_by is None:
        return job
    done = session.execute(
        select(
            ResultRow.workload,
            ResultRow.task,
            ResultRow.runtime,
            ResultRow.device,
            ResultRow.precision,
            ResultRow.batch_size,
            ResultRow.threads,
            ResultRow.devices,
            ResultRow.context_tokens,
            ResultRow.variant,
        )
        .join(Run, Run.id == ResultRow.run_id)
        .where(Run.job_id == row.id, ResultRow.machine_id == row.claimed_by)
        .distinct()
    ).all()
    labels = sorted(
        {
            stored_label(
                r.workload,
                r.task,
                r.runtime,
                r.device,
                r.precision,
                r.batch_size,
                threads=r.threads,
                devices=r.devices,
                context=r.context_tokens,
                variant=r.variant,
            )
            for r in done
        }
    )
    return job.model_copy(update={"measured": labels})


def _candidates(session: Session, machine: Machine, *, postgres: bool) -> Iterator[JobRow]:
    """Queued jobs this machine may run, oldest first, read a page at a time (selectors are
    matched here, so jobs meant for other machines never hide the ones behind them)."""
    query = (
        select(JobRow)
        .where(
            JobRow.status == JobStatus.queued.value,
            or_(JobRow.machine_id == machine.id, JobRow.machine_id.is_(None)),
        )
        .order_by(JobRow.created_at, JobRow.id)
        .limit(CANDIDATES)
    )
    if postgres:
        query = query.with_for_update(skip_locked=True)
    offset = 0
    while True:
        rows = session.scalars(query.offset(offset)).all()
        for row in rows:
            if row.machine_id is not None or matches(row.selector, machine.labels):
                yield row
        if len(rows) < CANDIDATES:
            return
        offset += CANDIDATES


def _owned(session: Session, job_id: uuid.UUID, machine_id: uuid.UUID) -> JobRow:
    row = get(session, job_id)
    if row.claimed_by != machine_id:
        raise ForbiddenError(f"job {job_id} is not held by this machine")
    return row


def progress(
    session: Session, job_id: uuid.UUID, machine_id: uuid.UUID, *, done: int, total: int | None, lease: timedelta
) -> JobRow:
    """Record progress and extend the lease; a cancelled job answers with its status so the agent stops."""
    row = _owned(session, job_id, machine_id)
    if row.status == JobStatus.running.value:
        row.configs_done = done
        row.configs_total = total
        row.lease_expires_at = utcnow() + lease
    return row


def finish(
    session: Session, job_id: uuid.UUID, machine_id: uuid.UUID, *, status: JobStatus, message: str | None
) -> JobRow:
    if status not in (JobStatus.done, JobStatus.failed, JobStatus.queued):
        raise ConflictError("a job finishes as done or failed, or is handed back as queued")
    row = _owned(session, job_id, machine_id)
    if row.status == JobStatus.running.value:
        row.status = status.value
        row.message = message
        row.lease_expires_at = None
        if status is JobStatus.queued:
            row.claimed_by = None
            if row.attempts >= row.max_attempts:
                row.status = JobStatus.failed.value
                # the agent's message may be as long as a job's message may be: cut it, not the job
                row.message = f"handed back after its last attempt: {message}"[:TEXT_MAX]
    return row
