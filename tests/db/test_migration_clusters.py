"""Migration 0009 (declared clusters, a result's nodes and cluster): stored results ran on one machine."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases
from tests.db.test_migrations import _insert_legacy_results, _rows


def _schema(url: str) -> tuple[set[str], set[str], set[str]]:
    engine = create_engine(url)
    try:
        found = inspect(engine)
        columns = {column["name"] for column in found.get_columns("results")}
        indexes = {index["name"] or "" for index in found.get_indexes("results")}
        return columns, indexes, set(found.get_table_names())
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_stored_before_ran_on_one_machine_and_the_clusters_come_and_go(
    backend: str, scratch: ScratchDatabases
) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0008")
    _insert_legacy_results(url)
    migrate.upgrade(url, "0009")
    assert _rows(url, "SELECT nodes, cluster FROM results") == {(1, None)}
    columns, indexes, tables = _schema(url)
    assert "ix_results_devices" in indexes and {"clusters", "cluster_members"} <= tables
    migrate.downgrade(url, "0008")
    columns, indexes, tables = _schema(url)
    assert {"nodes", "cluster"}.isdisjoint(columns) and "ix_results_devices" not in indexes
    assert {"clusters", "cluster_members"}.isdisjoint(tables)
    assert len(_rows(url, "SELECT id FROM results")) == 3
