"""Migration 0010 (a result's model variant): results stored before are of the original model."""

from __future__ import annotations

import pytest

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases
from tests.db.test_migration_result_devices import _columns
from tests.db.test_migrations import _insert_legacy_results, _rows


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_stored_before_are_of_the_original_model(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0009")
    _insert_legacy_results(url)
    migrate.upgrade(url, "0010")
    assert _rows(url, "SELECT variant FROM results") == {(None,)}
    migrate.downgrade(url, "0009")
    assert "variant" not in _columns(url)
    assert len(_rows(url, "SELECT id FROM results")) == 3
