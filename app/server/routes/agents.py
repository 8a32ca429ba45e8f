from __future__ import annotations

import uuid
from datetime import timedelta

from fastapi import APIRouter, Response, status

from app.contracts import (
    AgentState,
    EnrollRequest,
    EnrollResponse,
    Heartbeat,
    HeartbeatReply,
    Job,
    JobFinish,
    JobProgress,
    MachineStatus,
)
from app.db import jobs, machines
from app.db.models import utcnow
from app.server.deps import DatabaseDep, Enroller, MachineAgent, MachineBeat, SettingsDep

router = APIRouter(prefix="/agents", tags=["agents"])


@router.post("/enroll", status_code=status.HTTP_201_CREATED)
def enroll(body: EnrollRequest, principal: Enroller, db: DatabaseDep, settings: SettingsDep) -> EnrollResponse:
    """Exchange an enrollment token and a MachineSpec for a machine token (shown once).

    Re-enrolling an approved machine: send its current token as ``machine_token`` to replace it at
    once; without it the new token awaits an admin's approval (status pending)."""
    with db.writing() as session:
        machine, secret, status_now = machines.enroll(
            session,
            enrollment_token_id=principal.token_id,
            spec=body.spec,
            auto_approve=settings.auto_approve_machines,
            machine_token=body.machine_token,
        )
        return EnrollResponse(machine_id=machine.id, machine_token=secret, status=status_now)


@router.post("/heartbeat")
def heartbeat(beat: Heartbeat, principal: MachineBeat, db: DatabaseDep, settings: SettingsDep) -> HeartbeatReply:
    """The agent is alive (and what it is doing); a changed spec is recorded. A token awaiting
    approval is told so and changes nothing: the machine's own agent may still be running."""
    assert principal.machine_id is not None
    if principal.awaiting_approval:
        return HeartbeatReply(
            machine_id=principal.machine_id,
            status=MachineStatus.pending,
            heartbeat_interval_s=settings.heartbeat_interval_s,
        )
    with db.writing() as session:
        machine = machines.heartbeat(session, principal.machine_id, beat)
        return HeartbeatReply(
            machine_id=machine.id,
            status=machines.displayed_status(machine),
            heartbeat_interval_s=settings.heartbeat_interval_s,
        )


@router.post("/claim", responses={204: {"description": "No job for this machine now."}})
def claim(principal: MachineAgent, db: DatabaseDep, settings: SettingsDep, response: Response) -> Job | None:
    """Take the oldest queued job this machine may run; it is held under a lease that progress reports extend."""
    assert principal.machine_id is not None
    with db.writing() as session:
        machine = machines.get(session, principal.machine_id)
        machine.last_seen_at = utcnow()
        row = jobs.claim(session, machine, lease=timedelta(seconds=settings.job_lease_s), postgres=not db.is_sqlite)
        if row is None:
            response.status_code = status.HTTP_204_NO_CONTENT
            return None
        machine.agent_state = AgentState.running.value
        job = jobs.claimed(session, row)
        job.lease_s = settings.job_lease_s
        return job


@router.post("/jobs/{job_id}/progress")
def job_progress(
    job_id: uuid.UUID, body: JobProgress, principal: MachineAgent, db: DatabaseDep, settings: SettingsDep
) -> Job:
    """Configs done so far; extends the lease. A cancelled job comes back with status 'cancelled'."""
    assert principal.machine_id is not None
    with db.writing() as session:
        row = jobs.progress(
            session,
            job_id,
            principal.machine_id,
            done=body.configs_done,
            total=body.configs_total,
            lease=timedelta(seconds=settings.job_lease_s),
        )
        job = jobs.to_job(row)
        job.lease_s = settings.job_lease_s
        return job


@router.post("/jobs/{job_id}/finish")
def job_finish(job_id: uuid.UUID, body: JobFinish, principal: MachineAgent, db: DatabaseDep) -> Job:
    assert principal.machine_id is not None
    with db.writing() as session:
        row = jobs.finish(session, job_id, principal.machine_id, status=body.status, message=body.message)
        machine = machines.get(session, principal.machine_id)
        machine.agent_state = AgentState.idle.value
        return jobs.to_job(row)
