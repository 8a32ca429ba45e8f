from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from app.contracts import MachineLabels, MachineRead, MachineStatus, Page
from app.db import machines
from app.server.deps import Admin, DatabaseDep, Reader
from app.server.limits import MAX_OFFSET

router = APIRouter(prefix="/machines", tags=["machines"])


@router.get("")
def list_machines(
    _reader: Reader,
    db: DatabaseDep,
    status: MachineStatus | None = None,
    search: Annotated[str | None, Query(max_length=200, description="Part of the hostname.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Page[MachineRead]:
    with db.reading() as session:
        return machines.page(session, status=status, search=search, limit=limit, offset=offset)


@router.get("/{machine_id}")
def get_machine(machine_id: uuid.UUID, _reader: Reader, db: DatabaseDep) -> MachineRead:
    with db.reading() as session:
        return machines.to_read(session, machines.get(session, machine_id), with_spec=True)


@router.put("/{machine_id}/labels")
def set_labels(machine_id: uuid.UUID, body: MachineLabels, _admin: Admin, db: DatabaseDep) -> MachineRead:
    """Replace the labels that job selectors match (e.g. {"gpu": "h100-sxm5-80gb", "rack": "b2"})."""
    with db.writing() as session:
        return machines.to_read(session, machines.set_labels(session, machine_id, body.labels))


@router.post("/{machine_id}/retire")
def retire_machine(machine_id: uuid.UUID, _admin: Admin, db: DatabaseDep) -> MachineRead:
    """Take a machine out of service: its tokens stop working, its results stay."""
    with db.writing() as session:
        return machines.to_read(session, machines.retire(session, machine_id))


@router.post("/{machine_id}/unretire")
def unretire_machine(machine_id: uuid.UUID, _admin: Admin, db: DatabaseDep) -> MachineRead:
    """Bring a retired machine back: it returns pending, its agent enrols again and an admin approves it."""
    with db.writing() as session:
        return machines.to_read(session, machines.unretire(session, machine_id))


@router.post("/{machine_id}/approve")
def approve_machine(machine_id: uuid.UUID, _admin: Admin, db: DatabaseDep) -> MachineRead:
    """Let a pending machine upload runs and take jobs; for a machine re-enrolled without its current
    token, let the new agent's token work and revoke the others."""
    with db.writing() as session:
        return machines.to_read(session, machines.approve(session, machine_id))
