"""`hwadvisor machines ...`: the fleet enrolled with this server."""

from __future__ import annotations

import getpass
import uuid
from typing import Annotated, TypeVar

import typer
from pydantic import BaseModel

from app.cli.common import database
from app.contracts import MachineStatus

Model = TypeVar("Model", bound=BaseModel)

group = typer.Typer(no_args_is_help=True, help="Machines enrolled with this server.")


@group.command("list")
def list_(status: MachineStatus | None = None) -> None:
    """List machines with their status."""
    from app.db import machines, tokens

    with database().reading() as session:
        for m in machines.page(session, status=status, limit=10_000).items:
            seen = m.last_seen_at.isoformat(timespec="seconds") if m.last_seen_at else "never"
            awaiting = (
                "  (re-enrolled: approve to switch to the new agent)" if tokens.has_awaiting(session, m.id) else ""
            )
            typer.echo(f"{m.id}  {m.status.value:<8} {m.hostname:<24} last seen {seen}{awaiting}")


@group.command("approve")
def approve(machine_id: uuid.UUID) -> None:
    """Approve a pending machine, or the re-enrolment of one that awaits approval (its other tokens are revoked)."""
    from app.db import machines

    with database().writing() as session:
        machine = machines.approve(session, machine_id)
        typer.echo(f"{machine.id} is {machine.status}")


@group.command("unretire")
def unretire(machine_id: uuid.UUID) -> None:
    """Bring a retired machine back: it returns pending; enrol its agent again, then approve it."""
    from app.db import machines

    with database().writing() as session:
        machine = machines.unretire(session, machine_id)
        typer.echo(f"{machine.id} is {machine.status}")
        if machine.status == MachineStatus.pending.value:
            typer.echo(
                "enrol its agent again (hwadvisor agent enroll ...), then: hwadvisor machines approve "
                + str(machine.id)
            )


@group.command("set-catalog")
def set_catalog(
    machine_id: uuid.UUID,
    catalog_id: Annotated[str, typer.Argument(help="The entry's id (hwadvisor catalog list --search TEXT finds it).")],
    device: Annotated[
        str | None, typer.Option(help="cpu or cuda:N; unset, the CPU for a CPU entry, the GPUs for a GPU entry.")
    ] = None,
) -> None:
    """Pin a machine's device to a catalog entry, for a device the server cannot match itself (a
    hypervisor's generic CPU name: `hwadvisor catalog match NAME` says why). It holds, recorded with
    who and when, when the machine reports its spec again, until `hwadvisor machines clear-catalog`."""
    from app.contracts import CatalogPinCreate
    from app.db import catalog_pins, machines

    body = validated(CatalogPinCreate, {"catalog_id": catalog_id, "device": device})
    with database().writing() as session:
        machine = machines.get(session, machine_id)
        for found in catalog_pins.pin(session, machine, body.catalog_id, body.device, by=who()):
            typer.echo(f"{machine.id} {found.device}: {catalog_pins.note(found)}")


@group.command("clear-catalog")
def clear_catalog(
    machine_id: uuid.UUID,
    device: Annotated[str | None, typer.Option(help="cpu or cuda:N; unset, every pinned device.")] = None,
) -> None:
    """Clear an admin's pin: the device's automatic catalog match holds again."""
    from app.db import catalog_pins, machines

    with database().writing() as session:
        machine = machines.get(session, machine_id)
        for cleared in catalog_pins.unpin(session, machine, device):
            row = next((r for r in machine.devices if r.device_id == cleared), None)
            now = row.catalog_id if row is not None and row.catalog_id else "no catalog entry"
            typer.echo(f"{machine.id} {cleared}: unpinned; matched automatically: {now}")


def who(command: str = "hwadvisor machines set-catalog") -> str:
    """Who pins from the command line: the user running it, where the database is."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (a bare container)
        user = "a local user"
    return f"{user} with {command}"


def validated(model: type[Model], values: dict[str, object]) -> Model:
    from pydantic import ValidationError

    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise typer.BadParameter(f"{'.'.join(map(str, error['loc']))}: {error['msg']}") from exc
