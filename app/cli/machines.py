"""`hwadvisor machines ...`: the fleet enrolled with this server."""

from __future__ import annotations

import uuid

import typer

from app.cli.common import database_url
from app.contracts import MachineStatus

group = typer.Typer(no_args_is_help=True, help="Machines enrolled with this server.")


@group.command("list")
def list_(status: MachineStatus | None = None) -> None:
    """List machines with their status."""
    from app.db import machines, tokens
    from app.db.engine import Database

    with Database(database_url()).reading() as session:
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
    from app.db.engine import Database

    with Database(database_url()).writing() as session:
        machine = machines.approve(session, machine_id)
        typer.echo(f"{machine.id} is {machine.status}")


@group.command("unretire")
def unretire(machine_id: uuid.UUID) -> None:
    """Bring a retired machine back: it returns pending; enrol its agent again, then approve it."""
    from app.db import machines
    from app.db.engine import Database

    with Database(database_url()).writing() as session:
        machine = machines.unretire(session, machine_id)
        typer.echo(f"{machine.id} is {machine.status}")
        if machine.status == MachineStatus.pending.value:
            typer.echo(
                "enrol its agent again (hwadvisor agent enroll ...), then: hwadvisor machines approve "
                + str(machine.id)
            )
