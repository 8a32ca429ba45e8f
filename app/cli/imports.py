"""`hwadvisor import`: published results (a CSV) as their own source."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.common import database_url


def import_public(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CSV with PublicResult's columns.")],
    source: Annotated[str | None, typer.Option(help="public:<name>, for rows without a source column.")] = None,
) -> None:
    """Import published results (a CSV) as their own source, apart from the lab's measurements."""
    from app.catalog import public
    from app.db.engine import Database
    from app.db.migrate import upgrade

    rows = public.parse_csv(path.read_text(encoding="utf-8"), source=source)
    url = database_url()
    upgrade(url)
    with Database(url).writing() as session:
        count = public.store(session, rows)
    typer.echo(f"imported {count} results from {path} ({', '.join(sorted({r.source for r in rows}))})")
