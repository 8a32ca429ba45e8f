"""Export a filled SQLite database and import it into PostgreSQL (or another SQLite): nothing is lost."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.contracts import CatalogPatch, Heartbeat, JobCreate, TokenKind
from app.db import catalog, dump, jobs, machines, migrate, runs, tokens, verify
from app.db.engine import Database
from app.db.models import Base
from app.errors import ConflictError
from testkit.factories import enrolled, machine_spec, result, run_report
from tests.conftest import PG_URL, ScratchDatabases


def filled(scratch: ScratchDatabases) -> Database:
    db = Database(scratch.new("sqlite"))
    migrate.upgrade(db.url)
    with db.writing() as session:
        enrollment, _secret = tokens.issue(session, kind=TokenKind.enrollment)
        catalog.apply(session, "a10", CatalogPatch(tdp_w=140))  # the lab's own figure for a part
    for n in range(2):
        spec = machine_spec()
        with db.writing() as session:
            machine, _token, _status = machines.enroll(
                session, enrollment_token_id=enrollment.id, spec=spec, auto_approve=True
            )
            machines.heartbeat(session, machine.id, Heartbeat(state="idle"))  # type: ignore[arg-type]
            job = jobs.create(session, JobCreate(suite="quick", machine_id=machine.id))
            machine_id, job_id = machine.id, job.id
        report = run_report(spec, job_id=job_id, results=[result(batch_size=b, cv=0.01 * n) for b in (1, 2, 4)])
        runs.ingest(db, machine_id=machine_id, report=report)
    return db


def rows(export_text: str) -> list[tuple[str, str]]:
    return sorted(
        (item["table"], json.dumps(item["row"], sort_keys=True))
        for item in map(json.loads, export_text.splitlines()[1:])
    )


def test_round_trip_to_another_database_loses_nothing(scratch: ScratchDatabases) -> None:
    source = filled(scratch)
    first = io.StringIO()
    counts = dump.export(source, first)
    assert counts["results"] == 6 and counts["machines"] == 2 and counts["jobs"] == 2

    target = Database(scratch.new("postgres" if PG_URL else "sqlite"))
    migrate.upgrade(target.url)
    imported = dump.import_(target, io.StringIO(first.getvalue()))
    assert imported == counts
    second = io.StringIO()
    dump.export(target, second)
    assert rows(second.getvalue()) == rows(first.getvalue())

    # The imported database keeps working: new rows get fresh ids past the imported ones.
    spec = machine_spec()
    machine_id = enrolled(target, spec)
    stored, created = runs.ingest(target, machine_id=machine_id, report=run_report(spec))
    assert created and stored.result_count == 3
    source.dispose()
    target.dispose()


def test_import_refuses_a_database_that_is_not_empty(scratch: ScratchDatabases, tmp_path: Path) -> None:
    source = filled(scratch)
    path = tmp_path / "export.jsonl"
    dump.export_file(source, path)
    with pytest.raises(ConflictError, match="not empty"):
        dump.import_file(source, path)
    with pytest.raises(ConflictError, match="not an hwadvisor export"):
        dump.import_(source, io.StringIO('{"something": "else"}\n'))
    source.dispose()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"row": {}}', r"line 2 of the export is not a row: KeyError 'table'"),
        ("[1, 2]", "line 2 of the export is not a JSON object"),
        ('{"table": "machines", "row": {"id": "not-a-uuid"}}', "line 2 of the export is not a row: ValueError"),
        ('{"table": "nope", "row": {}}', "line 2: the export has a table this schema lacks: nope"),
        ('{"table": "machines", "row": {"no_such_column": 1}}', "the machines rows up to line 2 could not be stored"),
    ],
)
def test_a_line_that_is_not_a_row_is_refused_with_its_number_and_nothing_is_kept(
    scratch: ScratchDatabases, line: str, message: str
) -> None:
    source = filled(scratch)
    exported = io.StringIO()
    dump.export(source, exported)
    header = exported.getvalue().splitlines()[0]
    target = Database(scratch.new("sqlite"))
    migrate.upgrade(target.url)
    with pytest.raises(ConflictError, match=message):
        dump.import_(target, io.StringIO(f"{header}\n{line}\n"))
    empty = io.StringIO()
    assert not any(dump.export(target, empty).values())
    source.dispose()
    target.dispose()


def test_every_table_is_read_back_at_import_or_says_why_not() -> None:
    tables = {t.name for t in Base.metadata.sorted_tables}
    assert set(verify.READERS) | set(verify.NOT_READ) == tables
    assert not set(verify.READERS) & set(verify.NOT_READ)


def _edited(text: str, table: str, change: dict[str, object]) -> tuple[str, int]:
    """The export with the first row of ``table`` changed, and that row's line number."""
    lines = text.splitlines()
    for number, line in enumerate(lines[1:], start=2):
        item = json.loads(line)
        if item["table"] == table:
            item["row"].update(change)
            lines[number - 1] = json.dumps(item)
            return "\n".join(lines) + "\n", number
    raise AssertionError(f"the export has no {table} row")


@pytest.mark.parametrize(
    ("table", "change", "field"),
    [
        ("results", {"precision": "fp64"}, "precision"),
        ("results", {"throughput_samples_per_s": -5.0}, "throughput_samples_per_s"),
        ("results", {"batch_size": 0}, "batch_size"),
        ("spec_snapshots", {"spec": {"hostname": "lab-1"}}, "Field required"),
        ("tokens", {"kind": "root"}, "kind"),
        ("jobs", {"status": "exploded"}, "status"),
        ("machines", {"status": "haunted"}, "status"),
        ("catalog_entries", {"overrides": {"tdp_w": -5}}, "tdp_w"),
    ],
)
def test_a_row_the_schema_takes_but_the_api_could_not_answer_with_is_refused_and_nothing_is_kept(
    scratch: ScratchDatabases, table: str, change: dict[str, object], field: str
) -> None:
    source = filled(scratch)
    exported = io.StringIO()
    dump.export(source, exported)
    text, line = _edited(exported.getvalue(), table, change)
    target = Database(scratch.new("postgres" if PG_URL else "sqlite"))
    migrate.upgrade(target.url)
    with pytest.raises(ConflictError, match=rf"line {line} of the export \({table} .*\) .*{field}") as refused:
        dump.import_(target, io.StringIO(text))
    assert "import an export written by `hwadvisor db export` unchanged" in (refused.value.hint or "")
    empty = io.StringIO()
    assert not any(dump.export(target, empty).values())
    source.dispose()
    target.dispose()


def test_an_export_cut_short_keeps_nothing(scratch: ScratchDatabases) -> None:
    source = filled(scratch)
    exported = io.StringIO()
    dump.export(source, exported)
    lines = exported.getvalue().splitlines()
    last_result = max(n for n, line in enumerate(lines) if json.loads(line).get("table") == "results")
    target = Database(scratch.new("sqlite"))
    migrate.upgrade(target.url)
    with pytest.raises(ConflictError, match="promised"):
        dump.import_(target, io.StringIO("\n".join(lines[:last_result]) + "\n"))
    assert not any(dump.export(target, io.StringIO()).values())
    source.dispose()
    target.dispose()
