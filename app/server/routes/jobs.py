from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from app.bench.unrunnable import job_notes
from app.contracts import Job, JobCreate, JobStatus, Page
from app.db import jobs
from app.server.deps import Admin, DatabaseDep, Reader
from app.server.limits import MAX_OFFSET

router = APIRouter(prefix="/jobs", tags=["jobs"])


@router.post("", status_code=status.HTTP_201_CREATED)
def create_job(body: JobCreate, _admin: Admin, db: DatabaseDep) -> Job:
    """Queue a suite for one machine, or for the first free machine whose labels match the selector. The
    answer's notes say what no machine can run in the suite; it is queued all the same (an agent may have a
    plug-in this server lacks)."""
    with db.writing() as session:
        job = jobs.to_job(jobs.create(session, body))
        notes = job_notes(body.suite_toml)  # inside: a suite that fails here queues nothing
    return job.model_copy(update={"notes": notes})


@router.get("")
def list_jobs(
    _reader: Reader,
    db: DatabaseDep,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Page[Job]:
    with db.reading() as session:
        return jobs.page(session, status=status, limit=limit, offset=offset)


@router.get("/{job_id}")
def get_job(job_id: uuid.UUID, _reader: Reader, db: DatabaseDep) -> Job:
    with db.reading() as session:
        return jobs.to_job(jobs.get(session, job_id))


@router.post("/{job_id}/cancel")
def cancel_job(job_id: uuid.UUID, _admin: Admin, db: DatabaseDep) -> Job:
    """Cancel a queued or running job; a running agent learns it at its next progress report."""
    with db.writing() as session:
        return jobs.to_job(jobs.cancel(session, job_id))
