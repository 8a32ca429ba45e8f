"""`hwadvisor clusters ...`: machines declared to form one cluster, and the network between them."""

from __future__ import annotations

import uuid
from typing import Annotated

import typer

from app.cli.common import database
from app.cli.machines import validated, who

group = typer.Typer(no_args_is_help=True, help="Machines that form one cluster, and their network.")


@group.command("create")
def create(
    name: str,
    machine: Annotated[list[uuid.UUID], typer.Option(help="A member's machine id; give it once per member.")],
    network_gb_s: Annotated[
        float, typer.Option(help="Per device and direction between machines, GB/s: 12.5 for 100 GbE, 25 for 200G IB.")
    ],
    interconnect: Annotated[str | None, typer.Option(help="In words: '100 GbE RoCE', 'InfiniBand NDR'.")] = None,
) -> None:
    """Declare machines that form one cluster: plans over more devices than one machine holds cross its
    network (hwadvisor plan --cluster NAME), and data-parallel runs over its machines calibrate it."""
    from app.contracts import ClusterCreate
    from app.db import clusters

    body = validated(
        ClusterCreate,
        {"name": name, "machines": machine, "network_gb_s": network_gb_s, "interconnect": interconnect},
    )
    with database().writing() as session:
        found = clusters.to_read(clusters.create(session, body, by=who("hwadvisor clusters create")))
    typer.echo(
        f"{found.name}: {len(found.machines)} machines, {found.devices} devices "
        f"(up to {found.devices_per_system} in one), {found.network_gb_s:g} GB/s between them"
    )


@group.command("list")
def list_() -> None:
    """The declared clusters, with their members."""
    from app.db import clusters

    with database().reading() as session:
        found = [clusters.to_read(row) for row in clusters.everything(session)]
    if not found:
        typer.echo("no cluster is declared (hwadvisor clusters create NAME --machine ID --machine ID ...)")
    for c in found:
        over = f", {c.interconnect}" if c.interconnect else ""
        typer.echo(f"{c.name}: {c.devices} devices on {len(c.machines)} machines, {c.network_gb_s:g} GB/s{over}")
        for m in c.machines:
            typer.echo(f"  {m.machine_id}  {m.status.value:<8} {m.hostname:<24} {m.hardware or ''}")


@group.command("delete")
def delete(name: str) -> None:
    """Forget a declared cluster; results measured over it keep its name."""
    from app.db import clusters

    with database().writing() as session:
        clusters.delete(session, name)
    typer.echo(f"{name}: deleted")
