"""Every stored row read back as the API reads it, for `hwadvisor db import`.

The database's schema checks an imported row's columns and keys, not what the API promises of them: a
result with a negative throughput or an unknown precision, a machine spec that is not one, a catalog
entry whose figures do not parse. Such a row, from an export edited by hand or written by another
tool, would be stored and then fail every page that shows it (a 500 on GET /api/v1/results, a broken
catalog). So the import reads every row through the same function the API answers with and refuses
the file, naming the row, when one cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.contracts import MachineSpec, PublicResult, TokenKind
from app.db import catalog, clusters, jobs, machines, results, runs, tokens
from app.db.models import (
    CatalogEntry,
    ClusterRow,
    JobRow,
    Machine,
    PublicResultRow,
    ResultRow,
    Run,
    SessionRow,
    SpecSnapshot,
    TokenRow,
)
from app.errors import HwadvisorError

PAGE = 2000
"""Rows read at a time: an export of 100,000 results is not held in memory at once."""

Check = tuple[Any, Callable[[], object]]
"""A row's key and the reading of it, which raises when the API could not answer with the row."""

NOT_READ = {
    "devices": "read with their machine",
    "catalog_pins": "read with their machine",
    "cluster_members": "read with their cluster",
    "rate_limits": "counters the server keeps for itself, never answered",
}
"""Tables with no reader of their own, and why."""


def _paged(session: Session, model: Any, *options: Any) -> Iterator[tuple[Any, Any]]:
    """Every row of ``model`` with its key, in primary-key pages (a single-column key)."""
    (column,) = model.__table__.primary_key.columns
    attribute = getattr(model, column.name)
    last = None
    while True:
        query = select(model).options(*options).order_by(attribute).limit(PAGE)
        if last is not None:
            query = query.where(attribute > last)
        page = session.scalars(query).unique().all()
        for row in page:
            last = getattr(row, column.name)
            yield last, row
        if len(page) < PAGE:
            return
        session.expunge_all()


def _reader(model: Any, read: Callable[[Session, Any], object], *options: Any) -> Callable[[Session], Iterator[Check]]:
    """A table's checks: each row's key and ``read`` of it."""

    def checks(session: Session) -> Iterator[Check]:
        for key, row in _paged(session, model, *options):
            yield key, partial(read, session, row)

    return checks


READERS: dict[str, Callable[[Session], Iterator[Check]]] = {
    # before the machines, which read their latest: the row at fault is named
    "spec_snapshots": _reader(SpecSnapshot, lambda _s, row: MachineSpec.model_validate(row.spec)),
    "machines": _reader(Machine, lambda s, m: machines.to_read(s, m, with_spec=True)),
    "results": _reader(ResultRow, lambda _s, row: results.to_read(row), joinedload(ResultRow.machine)),
    "runs": _reader(Run, lambda _s, row: runs.to_read(row)),
    "jobs": _reader(JobRow, lambda _s, row: jobs.to_job(row)),
    "tokens": _reader(TokenRow, lambda _s, row: tokens.to_read(row)),
    "sessions": _reader(SessionRow, lambda _s, row: TokenKind(row.kind)),
    "clusters": _reader(ClusterRow, lambda _s, row: clusters.to_read(row)),
    "catalog_entries": _reader(CatalogEntry, lambda _s, row: catalog.checked_row(row)),
    "public_results": _reader(PublicResultRow, lambda _s, row: PublicResult.model_validate(row, from_attributes=True)),
}
"""Per table, its rows as the API reads them. Every table is here or in NOT_READ (a test holds it)."""


class Unreadable(Exception):
    """A stored row the API could not answer with."""

    def __init__(self, table: str, key: Any, why: str) -> None:
        super().__init__(f"{table} row {key}: {why}")
        self.table, self.key, self.why = table, key, why


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the row"
        return f"{where}: {first['msg']}"
    return f"{exc.__class__.__name__}: {exc}"


def check(session: Session) -> None:
    """Raise Unreadable for the first row (table by table) that the API could not read."""
    for table, reader in READERS.items():
        for key, read in reader(session):
            try:
                read()
            except (ValidationError, ValueError, KeyError, TypeError, AttributeError, HwadvisorError) as exc:
                raise Unreadable(table, key, _why(exc)) from exc
