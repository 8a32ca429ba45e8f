"""An admin's catalog entry for a machine's device: set, cleared, and applied over the automatic match.

The server matches each device it is told of (app/db/catalog.py), and a name that identifies no
part ('AMD EPYC' under a hypervisor) stays unmatched, with the reason. An admin who knows the part
pins the device to an entry. The pin is a row of its own: spec snapshots keep what the machine
reported and what matching made of it, while the device rows (what the recommender reads) and the
machine's detail show the pinned entry until the pin is cleared.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.orm import Session

from app.contracts import DeviceKind, MachineSpec
from app.db import catalog
from app.db.models import CatalogPinRow, DeviceRow, Machine, utcnow
from app.errors import InvalidInput, NotFoundError

KINDS = {"cpu": DeviceKind.cpu.value, "gpu": DeviceKind.cuda.value}
"""A catalog entry's kind -> the kind of device it can be."""


def pins(machine: Machine) -> dict[str, CatalogPinRow]:
    """The machine's pins by device id."""
    return {pin.device: pin for pin in machine.catalog_pins}


def pin(session: Session, machine: Machine, catalog_id: str, device: str | None, *, by: str) -> list[CatalogPinRow]:
    """Pin a device (or, with none named, the devices the entry's kind picks) to a catalog entry."""
    entry = catalog.entry(session, catalog_id)
    rows = _targets(machine, KINDS[entry.kind], entry.id, device)
    held = pins(machine)
    now = utcnow()
    pinned = []
    for row in rows:
        found = held.get(row.device_id)
        if found is None:
            found = CatalogPinRow(device=row.device_id)
            machine.catalog_pins.append(found)
        found.catalog_id, found.pinned_by, found.pinned_at = entry.id, by, now
        row.catalog_id = entry.id
        pinned.append(found)
    session.flush()
    return pinned


def _targets(machine: Machine, kind: str, catalog_id: str, device: str | None) -> list[DeviceRow]:
    named = ", ".join(f"{row.device_id} ({row.name})" for row in machine.devices) or "none reported yet"
    if device is not None:
        row = next((r for r in machine.devices if r.device_id == device), None)
        if row is None:
            raise NotFoundError(f"machine {machine.id} has no device {device!r}", hint=f"its devices: {named}")
        if row.kind != kind:
            raise InvalidInput(
                f"{catalog_id} is a {'CPU' if kind == 'cpu' else 'GPU'}, and {device} ({row.name}) is not",
                hint=f"its devices: {named}",
            )
        return [row]
    rows = [r for r in machine.devices if r.kind == kind]
    if not rows:
        raise InvalidInput(
            f"machine {machine.id} has no {'CPU' if kind == 'cpu' else 'GPU'}", hint=f"its devices: {named}"
        )
    if len({r.name for r in rows}) > 1:
        raise InvalidInput(
            f"the GPUs of machine {machine.id} report different names: {named}",
            hint="name the one to pin (--device cuda:N, or device in the request)",
        )
    return rows


def unpin(session: Session, machine: Machine, device: str | None) -> list[str]:
    """Clear the pin of a device (or every pin of the machine): the automatic match holds again,
    made with the lab's catalog as it is now. The devices unpinned are returned."""
    held = pins(machine)
    if device is None:
        cleared = list(held.values())
        if not cleared:
            raise NotFoundError(f"no device of machine {machine.id} is pinned to a catalog entry")
    elif device in held:
        cleared = [held[device]]
    else:
        raise NotFoundError(
            f"device {device!r} of machine {machine.id} is not pinned to a catalog entry",
            hint=f"pinned: {', '.join(held) or 'none'}",
        )
    matcher = catalog.matcher(session)
    rows = {row.device_id: row for row in machine.devices}
    for found in cleared:
        machine.catalog_pins.remove(found)
        row = rows.get(found.device)
        if row is not None:
            row.catalog_id = matcher.device("cpu" if row.kind == "cpu" else "gpu", row.name).catalog_id
    session.flush()
    return [found.device for found in cleared]


def note(found: CatalogPinRow) -> str:
    return f"pinned to {found.catalog_id} by an admin ({found.pinned_by}, {found.pinned_at:%Y-%m-%d %H:%M} UTC)"


def over(spec: MachineSpec, held: Mapping[str, CatalogPinRow]) -> MachineSpec:
    """The spec with its pinned devices showing the pinned entry, and what matching said, in the note."""
    if not held:
        return spec
    devices = []
    for device in spec.devices:
        found = held.get(device.id)
        if found is not None:
            said = (device.catalog_note or "").replace(f"; {catalog.PIN_HINT}", "") or "no reason kept"
            device = device.model_copy(
                update={"catalog_id": found.catalog_id, "catalog_note": f"{note(found)}; automatically: {said}"}
            )
        devices.append(device)
    return spec.model_copy(update={"devices": devices})
