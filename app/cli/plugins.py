"""`hwadvisor plugins [FAMILY]`: every plug-in family and what it holds, from the registries."""

from __future__ import annotations

from typing import Annotated

import typer

from app import plugins as families


def plugins(
    family: Annotated[
        str | None, typer.Argument(help=f"One family: {', '.join(families.FAMILIES)}; unset, all of them.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows as JSON (what GET /api/v1/registry serves).")
    ] = False,
) -> None:
    """List the workloads, runtimes, primitives, probes, energy meters, estimators and objectives, with
    what each needs and whether it can run on this machine."""
    import json

    rows = {family: families.describe(families.registry(family))} if family else families.describe_all()
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    for name, members in rows.items():
        typer.echo(name)
        for row in members:
            tasks = f" [{', '.join(row['tasks'])}]" if row["tasks"] else ""
            state = "" if row["available"] else f"  (unavailable: {row['reason']})"
            typer.echo(f"  {row['name']:<22} {row['description']}{tasks}{state}")
