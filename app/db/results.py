"""Result queries: filters, pagination and CSV export. (The recommender reads through app/db/evidence.py.)"""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, contains_eager

from app.contracts import ORIGINAL, DeviceKind, Page, Precision, ResultRead, ResultStatus, Task
from app.db.engine import Database
from app.db.models import ResultRow
from app.errors import InvalidInput

_S = TypeVar("_S", bound=Select[*tuple[Any, ...]])

CSV_COLUMNS = [
    "id",
    "run_id",
    "machine_id",
    "hostname",
    "device_kind",
    *[name for name in ResultRead.model_fields if name not in {"id", "run_id", "machine_id", "hostname"}],
]


@dataclass(frozen=True, slots=True)
class ResultFilter:
    machine_id: uuid.UUID | None = None
    run_id: uuid.UUID | None = None
    workload: str | None = None
    task: Task | None = None
    runtime: str | None = None
    precision: Precision | None = None
    device_kind: DeviceKind | None = None
    batch_size: int | None = None
    status: ResultStatus | None = None
    variant: str | None = None
    """A variant's name, or 'none' for the original model's results only."""

    def __post_init__(self) -> None:
        """``workload=resnet50/infer`` (the name as results used to carry it) is workload + task."""
        if self.workload is not None and "/" in self.workload:
            name, _, task = self.workload.partition("/")
            if task not in Task.__members__ or (self.task is not None and self.task.value != task):
                raise InvalidInput(
                    f"workload {self.workload!r} names task {task!r}",
                    hint="give workload=resnet50&task=infer (task is infer or train)",
                )
            object.__setattr__(self, "workload", name)
            object.__setattr__(self, "task", Task(task))

    def apply(self, query: _S) -> _S:
        for column, value in (
            (ResultRow.machine_id, self.machine_id),
            (ResultRow.run_id, self.run_id),
            (ResultRow.workload, self.workload),
            (ResultRow.task, self.task.value if self.task else None),
            (ResultRow.runtime, self.runtime),
            (ResultRow.precision, self.precision.value if self.precision else None),
            (ResultRow.device_kind, self.device_kind.value if self.device_kind else None),
            (ResultRow.batch_size, self.batch_size),
            (ResultRow.status, self.status.value if self.status else None),
        ):
            if value is not None:
                query = query.where(column == value)
        if self.variant == ORIGINAL:
            query = query.where(ResultRow.variant.is_(None))
        elif self.variant is not None:
            query = query.where(ResultRow.variant == self.variant)
        return query


def _select(where: ResultFilter) -> Select[ResultRow]:
    query = select(ResultRow).join(ResultRow.machine).options(contains_eager(ResultRow.machine))
    return where.apply(query)


def to_read(row: ResultRow) -> ResultRead:
    """The row read by its attributes; its machine must have been loaded with it (see _select)."""
    return ResultRead.model_validate(row, from_attributes=True)


def page(session: Session, where: ResultFilter, *, limit: int, offset: int) -> Page[ResultRead]:
    total = session.scalar(where.apply(select(func.count(ResultRow.id)))) or 0
    rows = session.scalars(_select(where).order_by(ResultRow.id).limit(limit).offset(offset))
    return Page[ResultRead](items=[to_read(row) for row in rows], total=total, limit=limit, offset=offset)


# A cell a spreadsheet would read as a formula (OWASP "CSV injection"): a machine reports its own
# hostname, so `=HYPERLINK(...)` must reach the sheet as text. Numbers are not strings and stay numbers.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: empty for None, a leading quote before anything that starts a formula."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


FIRST_PAGE = 100
"""Rows in an export's first page; each next page doubles, up to ``chunk``."""


def iter_csv(db: Database, where: ResultFilter, *, chunk: int = 2000) -> Generator[str]:
    """CSV text in pages, keyset-paginated on id, each page read in its own short transaction.

    Nothing is held while the consumer (a client that may never read) has the page: a stalled or
    abandoned stream keeps no connection, and at most one page of text is in memory per stream. The
    pages start small (FIRST_PAGE rows) and double: a client that asks and never reads costs the
    server one small page, not ``chunk`` rows of work, before the socket's buffers stop the stream
    (40 such clients had kept a slow 2-core server busy for 20 s with 2,000-row first pages)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    last_id = 0
    size = min(FIRST_PAGE, chunk)
    while True:
        with db.reading() as session:
            batch = session.scalars(
                _select(where).where(ResultRow.id > last_id).order_by(ResultRow.id).limit(size)
            ).all()
            records = [to_read(row).model_dump(mode="json") for row in batch]
        for data in records:
            writer.writerow([csv_cell(data[c]) for c in CSV_COLUMNS])
        if text := buffer.getvalue():  # the last page of an export whose pages came out even is empty
            yield text
        buffer.seek(0)
        buffer.truncate()
        if len(batch) < size:
            return
        last_id = batch[-1].id
        size = min(chunk, 2 * size)
