"""`hwadvisor catalog ...`: the hardware catalog as the recommender sees it, and the lab's overrides."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli.common import database_url

group = typer.Typer(no_args_is_help=True, help="The hardware catalog: specs, prices, the lab's overrides.")


@group.command("list")
def list_(kind: Annotated[str | None, typer.Option(help="gpu or cpu")] = None) -> None:
    """The catalog as the recommender sees it (the lab's overrides applied)."""
    from app.catalog import store
    from app.db.engine import Database

    with Database(database_url()).reading() as session:
        for e in store.entries(session).values():
            if kind is None or e.kind == kind:
                price = f"${e.price_usd:,.0f}" if e.price_usd else "-"
                typer.echo(f"{e.id:<26} {e.name:<36} {e.tdp_w or '-':>6} W  {price}")


@group.command("set")
def set_(
    catalog_id: str,
    field: Annotated[list[str], typer.Argument(help="FIELD=VALUE, e.g. price_usd=28000")],
) -> None:
    """Override fields of an entry (your own price quote), or add an entry (kind=, vendor=, name= needed)."""
    from app.catalog import store
    from app.contracts import CatalogPatch
    from app.db.engine import Database

    values = dict(f.split("=", 1) for f in field if "=" in f)
    if len(values) != len(field):
        raise typer.BadParameter("give each field as FIELD=VALUE")
    patch = CatalogPatch.model_validate(values, strict=False)
    with Database(database_url()).writing() as session:
        entry = store.apply(session, catalog_id, patch)
    typer.echo(entry.model_dump_json(indent=1))
