"""`hwadvisor catalog ...`: the hardware catalog as the recommender sees it, and the lab's overrides."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli.common import database_url

group = typer.Typer(no_args_is_help=True, help="The hardware catalog: specs, prices, the lab's overrides.")


@group.command("list")
def list_(kind: Annotated[str | None, typer.Option(help="gpu or cpu")] = None) -> None:
    """The catalog as the recommender sees it (the lab's overrides applied)."""
    from app.db import catalog
    from app.db.engine import Database

    with Database(database_url()).reading() as session:
        for e in catalog.entries(session).values():
            if kind is None or e.kind == kind:
                price = f"${e.price_usd:,.0f}" if e.price_usd else "-"
                typer.echo(f"{e.id:<26} {e.name:<36} {e.tdp_w or '-':>6} W  {price}")


@group.command("set")
def set_(
    catalog_id: str,
    field: Annotated[list[str], typer.Argument(help="FIELD=VALUE, e.g. price_usd=28000")],
) -> None:
    """Override fields of an entry (your own price quote), or add an entry (kind=, vendor=, name= needed)."""
    from app.contracts import CatalogPatch
    from app.db import catalog
    from app.db.engine import Database

    values = dict(f.split("=", 1) for f in field if "=" in f)
    if len(values) != len(field):
        raise typer.BadParameter("give each field as FIELD=VALUE")
    patch = CatalogPatch.model_validate(values, strict=False)
    with Database(database_url()).writing() as session:
        entry = catalog.apply(session, catalog_id, patch)
    typer.echo(entry.model_dump_json(indent=1))


@group.command("match")
def match(
    name: Annotated[
        str, typer.Argument(help='A device name as NVML or lscpu reports it, e.g. "NVIDIA H100 80GB HBM3".')
    ],
    kind: Annotated[str | None, typer.Option(help="gpu or cpu; unset, both are tried.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the CatalogMatch as JSON.")] = False,
) -> None:
    """What a device name matches in the catalog (the lab's aliases included), and why."""
    from app.db import catalog
    from app.db.engine import Database

    if kind not in (None, "gpu", "cpu"):
        raise typer.BadParameter("kind is gpu or cpu")
    with Database(database_url()).reading() as session:
        found = catalog.match(session, name, kind)  # type: ignore[arg-type]
    if as_json:
        typer.echo(found.model_dump_json(indent=1))
    else:
        typer.echo(f"{found.catalog_id or 'no match'} ({found.code}): {found.note}")
