"""Migration 0011 (a language model's figures on a result): the rows stored before have none."""

from __future__ import annotations

import pytest

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases
from tests.db.test_migration_result_devices import _columns
from tests.db.test_migrations import _insert_legacy_results, _rows

LLM_COLUMNS = {"context_tokens", "throughput_tokens_per_s", "energy_per_token_j", "kv_cache_mb"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_stored_before_have_no_language_model_figures(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0010")
    _insert_legacy_results(url)
    migrate.upgrade(url, "0011")
    assert _columns(url) >= LLM_COLUMNS
    assert _rows(url, "SELECT " + ", ".join(sorted(LLM_COLUMNS)) + " FROM results") == {(None,) * 4}
    migrate.downgrade(url, "0010")
    assert LLM_COLUMNS.isdisjoint(_columns(url))
    assert len(_rows(url, "SELECT id FROM results")) == 3
