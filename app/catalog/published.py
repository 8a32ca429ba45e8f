"""Results others published: shipped with the package (Lambda 2024, OpenVINO) or imported as CSV,
and beside them the reference runs hwadvisor ships (app/catalog/reference.py).

They are never mixed with the lab's own measurements: each keeps its ``source`` ('public:...',
'reference:hwadvisor-...'), and the recommender says which source every figure came from. An import
may not take a reference source. Storing and reading the imported ones is app/db/catalog.py's.
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from importlib import resources

from pydantic import ValidationError

from app.catalog import reference
from app.contracts import PublicResult
from app.errors import InvalidInput

REFERENCE_PREFIX = "reference:"

COLUMNS = tuple(PublicResult.model_fields)
REQUIRED = tuple(name for name, field in PublicResult.model_fields.items() if field.is_required())
MAX_IMPORT_ROWS = 100_000


@lru_cache(maxsize=1)
def shipped() -> tuple[PublicResult, ...]:
    """The published results shipped with the package, then the reference runs' rows."""
    text = resources.files("app.catalog").joinpath("data/public_results.csv").read_text(encoding="utf-8")
    return (*parse_csv(text), *reference.published_rows())


def parse_csv(text: str, *, source: str | None = None) -> list[PublicResult]:
    """Rows of a CSV with a header naming PublicResult's fields; ``source`` fills a missing column.
    A CSV never names a reference source: the reference runs ship as their own files.

    Every row is checked before any is kept: one bad row rejects the file, with its line number.
    What the csv module refuses (a field over its 131,072-character limit, a stray quote in strict
    mode) is InvalidInput too, with its line, not an error escaping to the caller."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        return _parse_rows(reader, source)
    except csv.Error as exc:
        # the underlying reader's count: DictReader's own is only updated after a row is read whole
        raise InvalidInput(f"line {reader.reader.line_num}: not readable as CSV: {exc}") from exc


def _parse_rows(reader: csv.DictReader[str], source: str | None) -> list[PublicResult]:
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
        if str(fields.get("source", "")).startswith(REFERENCE_PREFIX):
            raise InvalidInput(
                f"line {line}: source {fields['source']!r} names a reference run hwadvisor ships",
                hint="import published results under public:<name>",
            )
        try:
            rows.append(PublicResult.model_validate(fields, strict=False))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])  # empty for a rule of the whole row
            raise InvalidInput(f"line {line}: {where + ': ' if where else ''}{first['msg']}") from exc
    return rows
