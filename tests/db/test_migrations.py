from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import MetaData, create_engine, inspect, text

from app.db import migrate
from app.db.models import Base
from tests.conftest import BACKENDS, ScratchDatabases


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_upgrade_from_empty_and_downgrade_back(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    assert _tables(url) == set()
    migrate.upgrade(url)
    assert migrate.current_revision(url) == migrate.head_revision(url)
    assert _tables(url) == set(Base.metadata.tables)
    migrate.downgrade(url, "base")
    assert migrate.current_revision(url) is None
    assert _tables(url) == set()
    migrate.upgrade(url)
    assert _tables(url) == set(Base.metadata.tables)


@pytest.mark.parametrize("backend", BACKENDS)
def test_migrations_match_the_models(backend: str, scratch: ScratchDatabases) -> None:
    """Alembic is the only thing that makes the schema: the models must not drift from it."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    url = scratch.new(backend)
    migrate.upgrade(url)
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def _insert(url: str, rows: dict[str, Any]) -> None:
    """Insert each table's rows (one row or a list), in order, into the tables as the database has them
    at its revision (reflected, not the models'), in one transaction."""
    engine = create_engine(url)
    try:
        tables = MetaData()
        tables.reflect(engine)
        with engine.begin() as connection:
            for table, values in rows.items():
                connection.execute(tables.tables[table].insert(), values)
    finally:
        engine.dispose()


def _insert_legacy_results(url: str) -> None:
    """Rows as revision 0004 stored them: the task inside the workload's name, none on a primitive."""
    now = datetime.now(UTC)
    machine, run = uuid.uuid4().hex, uuid.uuid4().hex
    common = {"run_id": run, "machine_id": machine, "runtime": "torch-eager", "device": "cpu"}
    common |= {
        "device_kind": "cpu",
        "precision": "fp32",
        "batch_size": 1,
        "status": "ok",
        "power_source": "none",
    }
    _insert(
        url,
        {
            "machines": {
                "id": machine,
                "fingerprint": "f",
                "hostname": "h",
                "status": "online",
                "labels": {},
                "created_at": now,
            },
            "spec_snapshots": {"id": 1, "machine_id": machine, "spec_hash": "x", "spec": {}, "created_at": now},
            "runs": {
                "id": run, "machine_id": machine, "spec_snapshot_id": 1, "suite": "quick",
                "agent_version": "0.1.0", "started_at": now, "finished_at": now, "received_at": now,
                "result_count": 3,
            },
            "results": [{**common, "workload": w} for w in ("resnet50/infer", "bert_base/train", "gemm_2048")],
            "public_results": {
                "source": "public:x", "hardware_id": "l4", "hardware_name": "L4", "workload": "resnet50/train",
                "unit": "images/s", "runtime": "pytorch", "precision": "fp16", "batch_size": 64, "devices": 1,
                "throughput_samples_per_s": 100.0, "imported_at": now,
            },
        },
    )  # fmt: skip


def _rows(url: str, query: str) -> set[tuple[object, ...]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {tuple(row) for row in connection.execute(text(query))}
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_task_moves_out_of_the_workload_name_and_back(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0004")
    _insert_legacy_results(url)
    migrate.upgrade(url, "0005")
    assert _rows(url, "SELECT workload, task FROM results") == {
        ("resnet50", "infer"),
        ("bert_base", "train"),
        ("gemm_2048", None),
    }
    assert _rows(url, "SELECT workload, task FROM public_results") == {("resnet50", "train")}
    migrate.downgrade(url, "0004")
    assert _rows(url, "SELECT workload FROM results") == {("resnet50/infer",), ("bert_base/train",), ("gemm_2048",)}
    assert _rows(url, "SELECT workload FROM public_results") == {("resnet50/train",)}
