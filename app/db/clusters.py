"""Declared clusters: machines a lab says form one cluster, and the network between them.

A plan over more devices than one machine holds crosses a network; a declared cluster says which
(``PlanRequest.cluster.declared``), and a data-parallel run over its machines (``Result.cluster``)
measures it, which calibrates that network for later plans (app/perfmodel/lab_scaling.py).
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.contracts import ClusterCreate, ClusterMember, ClusterRead
from app.db import machines
from app.db.models import ClusterMemberRow, ClusterRow, Machine
from app.errors import ConflictError, NotFoundError

LIST_HINT = "hwadvisor clusters list (or GET /api/v1/clusters) shows the declared ones"


def create(session: Session, body: ClusterCreate, *, by: str) -> ClusterRow:
    if session.get(ClusterRow, body.name) is not None:
        raise ConflictError(
            f"a cluster named {body.name!r} is already declared",
            hint=f"delete it first (hwadvisor clusters delete {body.name}) or pick another name",
        )
    found = {m.id: m for m in session.scalars(select(Machine).where(Machine.id.in_(body.machines)))}
    unknown = [str(m) for m in body.machines if m not in found]
    if unknown:
        raise NotFoundError(
            f"no machine {', '.join(unknown)}", hint="hwadvisor machines list shows the fleet's machine ids"
        )
    retired = [found[m].hostname for m in body.machines if found[m].retired_at is not None]
    if retired:
        raise ConflictError(
            f"retired machine(s) cannot join a cluster: {', '.join(retired)}",
            hint="bring one back with hwadvisor machines unretire ID, or leave it out",
        )
    row = ClusterRow(name=body.name, network_gb_s=body.network_gb_s, interconnect=body.interconnect, created_by=by)
    row.members = [ClusterMemberRow(machine_id=m) for m in body.machines]
    session.add(row)
    session.flush()
    return row


def get(session: Session, name: str) -> ClusterRow:
    row = session.get(ClusterRow, name)
    if row is None:
        raise NotFoundError(f"no cluster named {name!r}", hint=LIST_HINT)
    return row


def everything(session: Session) -> list[ClusterRow]:
    return list(session.scalars(select(ClusterRow).order_by(ClusterRow.name)))


def delete(session: Session, name: str) -> None:
    """Forget the declaration; results measured over the cluster keep its name."""
    session.delete(get(session, name))
    session.flush()


def member_devices(machine: Machine) -> int:
    """What a member adds to the cluster: its GPUs, or its CPU where it has none."""
    return sum(1 for d in machine.devices if d.kind != "cpu") or 1


def to_read(row: ClusterRow) -> ClusterRead:
    members = [m.machine for m in row.members]
    counts = [member_devices(m) for m in members]
    return ClusterRead(
        name=row.name,
        network_gb_s=row.network_gb_s,
        interconnect=row.interconnect,
        machines=[
            ClusterMember(
                machine_id=m.id,
                hostname=m.hostname,
                status=machines.displayed_status(m),
                gpus=sum(1 for d in m.devices if d.kind != "cpu"),
                hardware=m.hardware,
            )
            for m in members
        ],
        devices=sum(counts),
        devices_per_system=max(counts, default=1),
        created_by=row.created_by,
        created_at=row.created_at,
    )


def network_of(session: Session, names: set[str]) -> dict[str, float]:
    """The declared network (GB/s per device and direction) of each named cluster that still exists."""
    if not names:
        return {}
    rows = session.execute(select(ClusterRow.name, ClusterRow.network_gb_s).where(ClusterRow.name.in_(names)))
    return {name: gb_s for name, gb_s in rows}


def of_machine(session: Session, machine_id: uuid.UUID) -> list[str]:
    return list(session.scalars(select(ClusterMemberRow.cluster).where(ClusterMemberRow.machine_id == machine_id)))
