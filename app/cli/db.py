"""`hwadvisor db ...`: the database's schema (migrations) and its data (export, import)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.common import database, database_url, shown_url

group = typer.Typer(no_args_is_help=True, help="Database schema and data.")


@group.command("upgrade")
def upgrade(revision: str = "head") -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    from app.db import migrate

    migrate.upgrade(database_url(), revision)
    typer.echo(f"database {shown_url(database_url())} at {migrate.current_revision(database_url())}")


@group.command("downgrade")
def downgrade(revision: Annotated[str, typer.Argument(help="Target revision; 'base' empties it.")]) -> None:
    """Revert migrations down to REVISION."""
    from app.db import migrate

    migrate.downgrade(database_url(), revision)
    typer.echo(f"database {shown_url(database_url())} at {migrate.current_revision(database_url())}")


@group.command("export")
def export(path: Annotated[Path, typer.Argument(help="JSON Lines file to write.")]) -> None:
    """Write every row of the database to a JSON Lines file."""
    from app.db.dump import export_file

    counts = export_file(database(), path)
    typer.echo(f"exported {sum(counts.values())} rows from {shown_url(database_url())} to {path}")


@group.command("import")
def import_(path: Annotated[Path, typer.Argument(help="A file made by `hwadvisor db export`.")]) -> None:
    """Load an export into this (empty, migrated) database, e.g. to move from SQLite to PostgreSQL."""
    from app.db.dump import import_file

    counts = import_file(database(), path)
    typer.echo(f"imported {sum(counts.values())} rows into {shown_url(database_url())}")


@group.command("current")
def current() -> None:
    """Print the database's migration revision and the newest one."""
    from app.db import migrate

    url = database_url()
    typer.echo(f"{shown_url(url)}: at {migrate.current_revision(url)}, head {migrate.head_revision(url)}")
