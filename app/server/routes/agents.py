from __future__ import annotations

from fastapi import APIRouter, status

from app.contracts import EnrollRequest, EnrollResponse, MachineStatus
from app.db import machines
from app.server.deps import DatabaseDep, Enroller, SettingsDep

router = APIRouter(prefix="/agents", tags=["agents"])


@router.post("/enroll", status_code=status.HTTP_201_CREATED)
def enroll(body: EnrollRequest, principal: Enroller, db: DatabaseDep, settings: SettingsDep) -> EnrollResponse:
    """Exchange an enrollment token and a MachineSpec for a machine token (shown once)."""
    with db.writing() as session:
        machine, secret = machines.enroll(
            session,
            enrollment_token_id=principal.token_id,
            spec=body.spec,
            auto_approve=settings.auto_approve_machines,
        )
        return EnrollResponse(machine_id=machine.id, machine_token=secret, status=MachineStatus(machine.status))
