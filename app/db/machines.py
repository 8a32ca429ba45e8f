"""Machines: enrolment, spec snapshots, approval, queries."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, not_, or_, select
from sqlalchemy.orm import Session, selectinload

from app.contracts import AgentState, DeviceKind, Heartbeat, MachineRead, MachineSpec, MachineStatus, Page, TokenKind
from app.db import catalog, catalog_pins, tokens
from app.db.models import DeviceRow, Machine, Run, SpecSnapshot, utcnow
from app.errors import AuthError, ConflictError, ForbiddenError, NotFoundError

OFFLINE_AFTER = timedelta(seconds=60)
"""Four missed heartbeats at the default interval (HWADVISOR_HEARTBEAT_INTERVAL_S, 15 s)."""


def spec_hash(spec: MachineSpec) -> str:
    """A hash of the spec's stable parts: readings that change by the minute (power, temperature,
    free memory) do not make a new snapshot."""
    data = spec.model_dump(mode="json")
    data["memory"].pop("available_mb", None)
    for device in data["devices"]:
        if device.get("nvidia"):
            for volatile in ("power_now_w", "temperature_c"):
                device["nvidia"].pop(volatile, None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def record_spec(session: Session, machine: Machine, spec: MachineSpec) -> SpecSnapshot:
    """The snapshot for this spec, made (and the device rows refreshed) only when the spec changed.

    The hash is of the spec as the agent sent it; what is stored has each device matched against
    the server's catalog (the lab's entries and aliases included)."""
    digest = spec_hash(spec)
    snapshot = session.scalars(
        select(SpecSnapshot).where(SpecSnapshot.machine_id == machine.id, SpecSnapshot.spec_hash == digest)
    ).first()
    if snapshot is not None:
        return snapshot
    spec = catalog.match_devices(session, spec)
    snapshot = SpecSnapshot(machine_id=machine.id, spec_hash=digest, spec=spec.model_dump(mode="json"))
    session.add(snapshot)
    machine.hostname = spec.hostname
    if spec.fingerprint != machine.fingerprint:
        _take_fingerprint(session, machine, spec.fingerprint)
    _sync_devices(machine, spec)
    session.flush()
    return snapshot


def _sync_devices(machine: Machine, spec: MachineSpec) -> None:
    """Update the device rows in place (a replaced list would insert before it deletes, and clash);
    a device an admin pinned keeps its pinned catalog entry, whatever matching made of the new spec."""
    held = catalog_pins.pins(machine)
    rows = {row.device_id: row for row in machine.devices}
    wanted = {d.id for d in spec.devices}
    for row in [r for r in machine.devices if r.device_id not in wanted]:
        machine.devices.remove(row)
    for device in spec.devices:
        row = rows.get(device.id) or DeviceRow(device_id=device.id)
        if row not in machine.devices:
            machine.devices.append(row)
        row.kind = device.kind.value
        row.name = device.name
        row.uuid = device.nvidia.uuid if device.nvidia else None
        row.memory_total_mb = device.memory_total_mb
        row.catalog_id = held[device.id].catalog_id if device.id in held else device.catalog_id
        row.isa_features = " ".join(spec.cpu.isa_features) if device.kind is DeviceKind.cpu else None


def _take_fingerprint(session: Session, machine: Machine, fingerprint: str) -> None:
    other = session.scalars(select(Machine).where(Machine.fingerprint == fingerprint)).first()
    if other is not None and other.id != machine.id:
        raise ConflictError(
            f"the hardware described is enrolled as another machine ({other.id})",
            hint="each machine must use its own machine token",
        )
    machine.fingerprint = fingerprint


def enroll(
    session: Session,
    *,
    enrollment_token_id: str,
    spec: MachineSpec,
    auto_approve: bool,
    machine_token: str | None = None,
) -> tuple[Machine, str, MachineStatus]:
    """Register (or re-register) the machine the spec describes; (the machine, its new token, the
    status that token has).

    A fingerprint is not a secret (a read-only key shows it; it derives from machine-id, CPU and
    memory), so it decides *which* machine, never *who may act for it*. Re-enrolling a machine an
    admin approved hands out a working token only to a caller that proves it is the machine's agent
    by sending the machine's current token (the earlier tokens are then revoked); anyone else gets a
    token that awaits an admin's approval, and the machine, its tokens and its spec are untouched
    until then. The same holds for a machine still pending approval whose first agent holds a token:
    re-registering it outright let any holder of an enrollment token revoke that agent and take its
    place in the admin's next approval. Only a pending machine with no live token (one brought back
    from retirement) is simply registered again."""
    tokens.consume_use(session, enrollment_token_id)
    machine = session.scalars(select(Machine).where(Machine.fingerprint == spec.fingerprint)).first()
    if machine is None:
        machine = Machine(
            fingerprint=spec.fingerprint,
            hostname=spec.hostname,
            status=(MachineStatus.online if auto_approve else MachineStatus.pending).value,
            labels=default_labels(catalog.match_devices(session, spec)),
        )
        session.add(machine)
        session.flush()
    elif machine.status == MachineStatus.retired.value:
        raise ConflictError(
            f"machine {machine.id} was retired",
            hint=f"an admin brings it back with `hwadvisor machines unretire {machine.id}`",
        )
    elif not _proves(session, machine, machine_token) and (
        machine.status != MachineStatus.pending.value or tokens.has_working(session, machine.id)
    ):
        tokens.revoke_machine_tokens(session, machine.id, awaiting_only=True)
        _row, secret = tokens.issue(
            session,
            kind=TokenKind.machine,
            machine_id=machine.id,
            note=f"re-enrolment from {spec.hostname}, awaiting approval",
            awaiting_approval=True,
        )
        return machine, secret, MachineStatus.pending
    else:
        tokens.revoke_machine_tokens(session, machine.id)
    machine.last_seen_at = utcnow()
    _replace_unreferenced_specs(session, machine)
    record_spec(session, machine, spec)
    _row, secret = tokens.issue(session, kind=TokenKind.machine, machine_id=machine.id, note=spec.hostname)
    return machine, secret, displayed_status(machine)


def _proves(session: Session, machine: Machine, machine_token: str | None) -> bool:
    """Whether the token is a working token of this machine (not one awaiting approval)."""
    if not machine_token:
        return False
    try:
        principal = tokens.authenticate(session, machine_token)
    except AuthError:
        return False
    return (
        principal.kind is TokenKind.machine and principal.machine_id == machine.id and not principal.awaiting_approval
    )


def default_labels(spec: MachineSpec) -> dict[str, Any]:
    """Labels a job selector can match without anyone typing them: cpu_arch, gpu, gpu_count."""
    labels: dict[str, Any] = {"cpu_arch": spec.cpu.arch, "hostname": spec.hostname}
    gpus = [d for d in spec.devices if d.kind.value == "cuda"]
    if gpus:
        labels["gpu"] = gpus[0].catalog_id or gpus[0].name
        labels["gpu_count"] = str(len(gpus))
    return labels


def get(session: Session, machine_id: uuid.UUID) -> Machine:
    machine = session.get(Machine, machine_id)
    if machine is None:
        raise NotFoundError(f"no machine with id {machine_id}")
    return machine


def latest_spec(session: Session, machine_id: uuid.UUID) -> MachineSpec | None:
    row = session.scalars(
        select(SpecSnapshot.spec).where(SpecSnapshot.machine_id == machine_id).order_by(SpecSnapshot.id.desc()).limit(1)
    ).first()
    return MachineSpec.model_validate(row) if row is not None else None


def approve(session: Session, machine_id: uuid.UUID) -> Machine:
    """Let a pending machine upload and take jobs (with the token of the agent that enrolled it
    first); for an approved machine with a re-enrolment awaiting approval, let that agent's token work
    and revoke the machine's other tokens."""
    machine = get(session, machine_id)
    if machine.status == MachineStatus.retired.value:
        raise ConflictError(
            f"machine {machine.id} is retired", hint=f"bring it back first: `hwadvisor machines unretire {machine.id}`"
        )
    if machine.status == MachineStatus.pending.value:
        machine.status = MachineStatus.online.value
        if tokens.has_working(session, machine.id):
            return machine  # its first agent's; a re-enrolment beside it waits for its own approval
    tokens.approve_awaiting(session, machine.id)
    return machine


def unretire(session: Session, machine_id: uuid.UUID) -> Machine:
    """Bring a retired machine back. Its old tokens stay revoked, so it returns pending: its agent
    enrols again and an admin approves it, as for a new machine; its results were kept."""
    machine = get(session, machine_id)
    if machine.status == MachineStatus.retired.value:
        machine.status = MachineStatus.pending.value
        machine.retired_at = None
    return machine


def displayed_status(machine: Machine, *, offline_after: timedelta = OFFLINE_AFTER) -> MachineStatus:
    """pending and retired as an admin set them; otherwise offline after missed heartbeats, busy
    while the agent runs a job or waits for the machine to be quiet, else online."""
    if machine.status in (MachineStatus.pending.value, MachineStatus.retired.value):
        return MachineStatus(machine.status)
    if machine.last_seen_at is None or utcnow() - machine.last_seen_at > offline_after:
        return MachineStatus.offline
    if machine.agent_state in (AgentState.running.value, AgentState.busy.value):
        return MachineStatus.busy
    return MachineStatus.online


def _status_is(status: MachineStatus) -> ColumnElement[bool]:
    """displayed_status as SQL, so that filtering and paging by status happen in the database."""
    if status in (MachineStatus.pending, MachineStatus.retired):
        return Machine.status == status.value
    enrolled = Machine.status.not_in((MachineStatus.pending.value, MachineStatus.retired.value))
    stale = or_(Machine.last_seen_at.is_(None), Machine.last_seen_at < utcnow() - OFFLINE_AFTER)
    working = Machine.agent_state.in_((AgentState.running.value, AgentState.busy.value))
    if status is MachineStatus.offline:
        return and_(enrolled, stale)
    if status is MachineStatus.busy:
        return and_(enrolled, not_(stale), working)
    return and_(enrolled, not_(stale), or_(Machine.agent_state.is_(None), not_(working)))


def count_by_status(session: Session) -> dict[MachineStatus, int]:
    """Machines per displayed status, counted in the database."""
    return {
        status: int(session.scalar(select(func.count()).select_from(Machine).where(_status_is(status))) or 0)
        for status in MachineStatus
    }


def heartbeat(session: Session, machine_id: uuid.UUID, beat: Heartbeat) -> Machine:
    """The agent is alive. A changed spec replaces the snapshots no run refers to, so a machine
    keeps one snapshot per spec its runs were measured on, plus its latest; a machine pending
    approval has no runs, so it keeps one spec at most, whatever it sends."""
    machine = get(session, machine_id)
    if machine.status == MachineStatus.retired.value:
        raise ForbiddenError(f"machine {machine_id} is retired")
    machine.last_seen_at = utcnow()
    machine.agent_state = beat.state.value
    if beat.spec is not None and spec_hash(beat.spec) != _latest_hash(session, machine.id):
        _replace_unreferenced_specs(session, machine)
        record_spec(session, machine, beat.spec)
    return machine


def _latest_hash(session: Session, machine_id: uuid.UUID) -> str | None:
    query = select(SpecSnapshot.spec_hash).where(SpecSnapshot.machine_id == machine_id)
    return session.scalars(query.order_by(SpecSnapshot.id.desc()).limit(1)).first()


def _replace_unreferenced_specs(session: Session, machine: Machine) -> None:
    """Delete the machine's snapshots that no run was measured on (the next spec replaces them)."""
    used = select(Run.spec_snapshot_id).where(Run.machine_id == machine.id)
    session.execute(
        delete(SpecSnapshot)
        .where(SpecSnapshot.machine_id == machine.id, SpecSnapshot.id.not_in(used))
        .execution_options(synchronize_session=False)
    )


def set_labels(session: Session, machine_id: uuid.UUID, labels: dict[str, str]) -> Machine:
    """Replace the labels job selectors match; the automatic ones (cpu_arch, gpu, ...) may be overridden."""
    machine = get(session, machine_id)
    machine.labels = dict(labels)
    return machine


def retire(session: Session, machine_id: uuid.UUID) -> Machine:
    """Take a machine out of service: its tokens stop working; its results stay."""
    machine = get(session, machine_id)
    machine.status = MachineStatus.retired.value
    machine.retired_at = utcnow()
    tokens.revoke_machine_tokens(session, machine.id)
    return machine


def to_read(session: Session, machine: Machine, *, with_spec: bool = False) -> MachineRead:
    """The row read by its attributes (``hardware`` is a property of the row); the status shown is
    derived from the heartbeats, and the spec is read only when asked for (its pinned devices
    showing the admin's entry)."""
    read = MachineRead.model_validate(machine, from_attributes=True)
    read.status = displayed_status(machine)
    spec = latest_spec(session, machine.id) if with_spec else None
    read.spec = catalog_pins.over(spec, catalog_pins.pins(machine)) if spec is not None else None
    return read


def page(
    session: Session,
    *,
    status: MachineStatus | None = None,
    search: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Page[MachineRead]:
    query = select(Machine).options(selectinload(Machine.devices), selectinload(Machine.catalog_pins))
    if status is not None:
        query = query.where(_status_is(status))
    if search:
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(Machine.hostname.ilike(pattern, escape="\\"))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(Machine.created_at, Machine.id).limit(limit).offset(offset))
    return Page[MachineRead](items=[to_read(session, m) for m in rows], total=total, limit=limit, offset=offset)
