"""`hwadvisor import`: published results (a CSV) as their own source."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.common import database
from app.errors import InvalidInput


def import_public(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CSV with PublicResult's columns.")],
    source: Annotated[str | None, typer.Option(help="public:<name>, for rows without a source column.")] = None,
) -> None:
    """Import published results (a CSV) as their own source, apart from the lab's measurements."""
    from app.catalog.published import parse_csv
    from app.db import catalog

    rows = parse_csv(_text(path), source=source)
    with database().writing() as session:
        count = catalog.store_public(session, rows)
    typer.echo(f"imported {count} results from {path} ({', '.join(sorted({r.source for r in rows}))})")


def _text(path: Path) -> str:
    """The file as text; a byte-order mark (Excel's "CSV UTF-8") is dropped, other encodings refused by name."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})",
            hint="save it as UTF-8 CSV and import it again",
        ) from None
