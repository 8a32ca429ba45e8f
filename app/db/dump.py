"""Export the whole database as JSON Lines, and import it into another (SQLite -> PostgreSQL, say).

The first line names the format, the schema revision and the row count of every table; then one
line per row, tables in foreign-key order. Import needs an empty database at the same revision,
inserts everything in one transaction, reads every row back as the API would (app/db/verify.py: a
row the schema takes but the API could not answer with refuses the file), and on PostgreSQL moves the
id sequences past the imported ids.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Table, func, insert, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session

from app.db import migrate, verify
from app.db.engine import Database
from app.db.models import Base, UTCDateTime
from app.errors import ConflictError

FORMAT = "hwadvisor-export"
VERSION = 1
BATCH = 1000


def _encode(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _decoder(table: Table) -> dict[str, Any]:
    """Per column, how to turn a JSON value back into what the column's type binds."""
    decoders: dict[str, Any] = {}
    for column in table.columns:
        if isinstance(column.type, UTCDateTime):
            decoders[column.name] = datetime.fromisoformat
        elif column.type.__class__.__name__ == "Uuid":
            decoders[column.name] = uuid.UUID
    return decoders


def export(db: Database, out: IO[str]) -> dict[str, int]:
    tables = Base.metadata.sorted_tables
    with db.engine.connect() as conn:
        counts = {t.name: int(conn.scalar(select(func.count()).select_from(t)) or 0) for t in tables}
        revision = migrate.current_revision(db.url)
        out.write(json.dumps({"format": FORMAT, "version": VERSION, "revision": revision, "tables": counts}) + "\n")
        for table in tables:
            order = list(table.primary_key.columns)
            for row in conn.execute(select(table).order_by(*order)).mappings():
                out.write(json.dumps({"table": table.name, "row": {k: _encode(v) for k, v in row.items()}}) + "\n")
    return counts


def _lines(source: IO[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(source, start=1):
        if line.strip():
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConflictError(f"line {number} of the export is not JSON: {exc}") from exc
            if not isinstance(item, dict):
                raise ConflictError(f"line {number} of the export is not a JSON object")
            yield number, item


def _row(number: int, item: dict[str, Any], decoders: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A line's table and row, its values as the columns bind them; a line that is not one is refused
    with its number (an export edited by hand, or cut short), never a traceback."""
    try:
        name, row = item["table"], item["row"]
        if name not in decoders:
            raise ConflictError(f"line {number}: the export has a table this schema lacks: {name}")
        return name, {k: decoders[name][k](v) if k in decoders[name] and v is not None else v for k, v in row.items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConflictError(
            f"line {number} of the export is not a row: {exc.__class__.__name__} {exc}",
            hint='each line after the first is {"table": NAME, "row": {COLUMN: VALUE, ...}}, '
            "as `hwadvisor db export` writes",
        ) from exc


def import_(db: Database, source: IO[str]) -> dict[str, int]:
    lines = _lines(source)
    _, header = next(lines, (0, {}))
    if header.get("format") != FORMAT:
        raise ConflictError("this is not an hwadvisor export (its first line names no format)")
    revision = migrate.current_revision(db.url)
    if header.get("revision") != revision:
        raise ConflictError(
            f"the export is at schema revision {header.get('revision')}, this database at {revision}",
            hint="run `hwadvisor db upgrade` on both sides first",
        )
    tables = {t.name: t for t in Base.metadata.sorted_tables}
    decoders = {name: _decoder(table) for name, table in tables.items()}
    imported = dict.fromkeys(tables, 0)
    with db.engine.begin() as conn:
        for name, table in tables.items():
            if conn.scalar(select(func.count()).select_from(table)):
                raise ConflictError(f"table {name} is not empty", hint="import into a freshly migrated database")
        pending: list[dict[str, Any]] = []
        current: str | None = None
        number = 0
        lines_of: dict[tuple[str, str], int] = {}  # (table, key) -> its line, to name a row refused later
        for number, item in lines:
            name, row = _row(number, item, decoders)
            lines_of[name, _key(tables[name], row)] = number
            if name != current and pending:
                _flush(conn, tables[current], pending, number)  # type: ignore[index]
                pending = []
            current = name
            pending.append(row)
            imported[name] += 1
            if len(pending) >= BATCH:
                _flush(conn, tables[name], pending, number)
                pending = []
        if pending and current is not None:
            _flush(conn, tables[current], pending, number)
        expected = header.get("tables")
        if not isinstance(expected, dict):
            raise ConflictError("the export's first line does not count its tables' rows")
        if any(imported.get(name, 0) != count for name, count in expected.items()):  # cut short: keep nothing
            raise ConflictError(f"the export's header promised {expected} rows but held {imported}")
        _read_back(conn, lines_of)
        if conn.dialect.name == "postgresql":
            _advance_sequences(conn, tables.values())
    return imported


def _key(table: Table, row: dict[str, Any]) -> str:
    return ",".join(str(row.get(column.name)) for column in table.primary_key.columns)


def _read_back(conn: Connection, lines_of: dict[tuple[str, str], int]) -> None:
    """Every imported row read as the API reads it; the first that cannot be is the import's error."""
    with Session(bind=conn) as session:
        try:
            verify.check(session)
        except verify.Unreadable as exc:
            line = lines_of.get((exc.table, str(exc.key)))
            raise ConflictError(
                f"line {line} of the export ({exc.table} {exc.key}) is not what hwadvisor stores: {exc.why}"
                if line is not None
                else f"the export's {exc.table} row {exc.key} is not what hwadvisor stores: {exc.why}",
                hint="nothing was imported; import an export written by `hwadvisor db export` unchanged",
            ) from exc


def _flush(conn: Connection, table: Table, rows: list[dict[str, Any]], number: int) -> None:
    """Insert rows of ``table`` read up to line ``number``; the database refusing them (a missing
    column, a row whose parent is not in the export) is the import's error, and nothing is kept."""
    try:
        conn.execute(insert(table), rows)
    except StatementError as exc:
        raise ConflictError(
            f"the {table.name} rows up to line {number} could not be stored: {exc.orig or exc}"[:1000],
            hint="nothing was imported; import an export written by `hwadvisor db export` unchanged",
        ) from exc


def _advance_sequences(conn: Connection, tables: Any) -> None:
    for table in tables:
        for column in table.primary_key.columns:
            single = len(table.primary_key.columns) == 1  # "auto" autoincrement: a lone integer key only
            if column.autoincrement is True or (
                single and column.autoincrement == "auto" and column.type.python_type is int
            ):
                conn.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column.name}'),"
                        f" COALESCE((SELECT MAX({column.name}) FROM {table.name}), 0) + 1, false)"
                    )
                )


def export_file(db: Database, path: Path) -> dict[str, int]:
    with path.open("w", encoding="utf-8") as out:
        return export(db, out)


def import_file(db: Database, path: Path) -> dict[str, int]:
    with path.open(encoding="utf-8") as source:
        return import_(db, source)
