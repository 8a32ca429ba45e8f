"""Migration 0008 (a result's device count and scaling efficiency): stored results are of one device."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases
from tests.db.test_migrations import _insert_legacy_results, _rows


def _columns(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return {column["name"] for column in inspect(engine).get_columns("results")}
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_stored_before_are_of_one_device(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0007")
    _insert_legacy_results(url)
    migrate.upgrade(url, "0008")
    assert _rows(url, "SELECT devices, scaling_efficiency FROM results") == {(1, None)}
    migrate.downgrade(url, "0007")
    assert {"devices", "scaling_efficiency"}.isdisjoint(_columns(url))
    assert len(_rows(url, "SELECT id FROM results")) == 3
