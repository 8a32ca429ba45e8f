from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from app.contracts import CatalogPinCreate, DeviceId, MachineLabels, MachineRead, MachineStatus, Page
from app.db import catalog_pins, machines
from app.db.tokens import ENV_ADMIN_ID, Principal
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


def admin_named(principal: Principal) -> str:
    """Who made an admin's choice, as it is recorded with it."""
    if principal.token_id == ENV_ADMIN_ID:
        return "the server's admin token (HWADVISOR_ADMIN_TOKEN)"
    return f"admin token {principal.token_id}"


@router.put("/{machine_id}/catalog")
def pin_catalog_entry(machine_id: uuid.UUID, body: CatalogPinCreate, admin: Admin, db: DatabaseDep) -> MachineRead:
    """Pin a device to a catalog entry: for a device the server cannot match itself (a hypervisor's
    generic CPU name such as 'AMD EPYC'; GET /api/v1/catalog/match says why a name does not match).
    Recorded with who and when, shown in the machine's detail, used by the recommender, and kept
    when the machine reports its spec again; 404 for an unknown catalog id, 422 for the wrong kind."""
    with db.writing() as session:
        machine = machines.get(session, machine_id)
        catalog_pins.pin(session, machine, body.catalog_id, body.device, by=admin_named(admin))
        return machines.to_read(session, machine, with_spec=True)


@router.delete("/{machine_id}/catalog")
def unpin_catalog_entry(
    machine_id: uuid.UUID,
    _admin: Admin,
    db: DatabaseDep,
    device: Annotated[DeviceId | None, Query(description="The device to unpin; unset, every pinned device.")] = None,
) -> MachineRead:
    """Clear an admin's pin: the device's automatic match (with the lab's catalog as it is now) holds again."""
    with db.writing() as session:
        machine = machines.get(session, machine_id)
        catalog_pins.unpin(session, machine, device)
        return machines.to_read(session, machine, with_spec=True)
