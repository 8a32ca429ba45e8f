"""Results others published: shipped with the package (Lambda 2024, OpenVINO) or imported as CSV.

They are never mixed with the lab's own measurements: each keeps its ``source`` ('public:...'),
and the recommender says which source every figure came from.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from pydantic import ValidationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.contracts import PublicResult
from app.db.models import PublicResultRow
from app.errors import InvalidInput

COLUMNS = tuple(PublicResult.model_fields)
REQUIRED = tuple(name for name, field in PublicResult.model_fields.items() if field.is_required())
MAX_IMPORT_ROWS = 100_000


@lru_cache(maxsize=1)
def shipped() -> tuple[PublicResult, ...]:
    text = resources.files("app.catalog").joinpath("data/public_results.csv").read_text(encoding="utf-8")
    return tuple(parse_csv(text))


def parse_csv(text: str, *, source: str | None = None) -> list[PublicResult]:
    """Rows of a CSV with a header naming PublicResult's fields; ``source`` fills a missing column.

    Every row is checked before any is kept: one bad row rejects the file, with its line number."""
    reader = csv.DictReader(io.StringIO(text))
    header = set(reader.fieldnames or ())
    unknown = header - set(COLUMNS)
    if unknown:
        raise InvalidInput(
            f"unknown CSV columns: {', '.join(sorted(unknown))}", hint=f"columns are {', '.join(COLUMNS)}"
        )
    missing = [c for c in REQUIRED if c not in header and not (c == "source" and source)]
    if missing:
        raise InvalidInput(f"the CSV lacks the columns {', '.join(missing)}", hint=f"columns are {', '.join(COLUMNS)}")
    rows: list[PublicResult] = []
    for line, raw in enumerate(reader, start=2):
        if len(rows) >= MAX_IMPORT_ROWS:
            raise InvalidInput(f"more than {MAX_IMPORT_ROWS} rows", hint="split the file")
        fields = {k: v for k, v in raw.items() if k is not None and v not in ("", None)}
        if source and "source" not in fields:
            fields["source"] = source
        try:
            rows.append(PublicResult.model_validate(fields, strict=False))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidInput(f"line {line}: {where}: {first['msg']}") from exc
    return rows


def store(session: Session, rows: Iterable[PublicResult]) -> int:
    count = 0
    for row in rows:
        session.add(PublicResultRow(**row.model_dump()))
        count += 1
    session.flush()
    return count


def imported(session: Session, *, workload: str | None = None) -> list[PublicResult]:
    query = select(PublicResultRow).order_by(PublicResultRow.id)
    if workload is not None:
        query = query.where(PublicResultRow.workload == workload)
    return [
        PublicResult.model_validate({name: getattr(row, name) for name in COLUMNS}) for row in session.scalars(query)
    ]


def all_results(session: Session, *, workload: str | None = None) -> list[PublicResult]:
    """The shipped results, then the imported ones."""
    ours = [r for r in shipped() if workload is None or r.workload == workload]
    return ours + imported(session, workload=workload)


def delete_source(session: Session, source: str) -> None:
    """Remove every imported result of one source, in one statement."""
    session.execute(delete(PublicResultRow).where(PublicResultRow.source == source))
