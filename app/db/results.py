"""Result queries: filters, pagination and CSV export. The recommender reads results through here."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from app.contracts import DeviceKind, Page, Precision, ResultRead, ResultStatus
from app.db.models import Machine, ResultRow

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
    runtime: str | None = None
    precision: Precision | None = None
    device_kind: DeviceKind | None = None
    batch_size: int | None = None
    status: ResultStatus | None = None

    def apply(self, query: _S) -> _S:
        for column, value in (
            (ResultRow.machine_id, self.machine_id),
            (ResultRow.run_id, self.run_id),
            (ResultRow.workload, self.workload),
            (ResultRow.runtime, self.runtime),
            (ResultRow.precision, self.precision.value if self.precision else None),
            (ResultRow.device_kind, self.device_kind.value if self.device_kind else None),
            (ResultRow.batch_size, self.batch_size),
            (ResultRow.status, self.status.value if self.status else None),
        ):
            if value is not None:
                query = query.where(column == value)
        return query


def _select(where: ResultFilter) -> Select[ResultRow, str]:
    query = select(ResultRow, Machine.hostname).join(Machine, Machine.id == ResultRow.machine_id)
    return where.apply(query)


def to_read(row: ResultRow, hostname: str) -> ResultRead:
    data = {name: getattr(row, name) for name in ResultRead.model_fields if name != "hostname"}
    return ResultRead.model_validate({**data, "hostname": hostname})


def page(session: Session, where: ResultFilter, *, limit: int, offset: int) -> Page[ResultRead]:
    total = session.scalar(where.apply(select(func.count(ResultRow.id)))) or 0
    rows = session.execute(_select(where).order_by(ResultRow.id).limit(limit).offset(offset))
    return Page[ResultRead](
        items=[to_read(row, hostname) for row, hostname in rows], total=total, limit=limit, offset=offset
    )


def iter_csv(session: Session, where: ResultFilter, *, chunk: int = 2000) -> Iterator[str]:
    """CSV text in chunks, keyset-paginated so a large export never sits in memory at once."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    last_id = 0
    while True:
        rows = session.execute(_select(where).where(ResultRow.id > last_id).order_by(ResultRow.id).limit(chunk))
        batch = rows.all()
        for row, hostname in batch:
            data = to_read(row, hostname).model_dump(mode="json")
            writer.writerow(["" if data[c] is None else data[c] for c in CSV_COLUMNS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        if len(batch) < chunk:
            return
        last_id = batch[-1][0].id
