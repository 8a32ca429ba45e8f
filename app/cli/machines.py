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
    from app.db import machines
    from app.db.engine import Database

    with Database(database_url()).reading() as session:
        for m in machines.page(session, status=status, limit=10_000).items:
            seen = m.last_seen_at.isoformat(timespec="seconds") if m.last_seen_at else "never"
            typer.echo(f"{m.id}  {m.status.value:<8} {m.hostname:<24} last seen {seen}")


@group.command("approve")
def approve(machine_id: uuid.UUID) -> None:
    """Approve a pending machine so it may upload runs and take jobs."""
    from app.db import machines
    from app.db.engine import Database

    with Database(database_url()).writing() as session:
        machine = machines.approve(session, machine_id)
        typer.echo(f"{machine.id} is {machine.status}")
