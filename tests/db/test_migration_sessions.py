"""Migration 0006 (dashboard sessions, machine tokens awaiting approval), up and down on each backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import MetaData, create_engine, inspect, text

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases


def _columns(url: str, table: str) -> set[str]:
    engine = create_engine(url)
    try:
        inspector = inspect(engine)
        if table not in inspector.get_table_names():
            return set()
        return {c["name"] for c in inspector.get_columns(table)}
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_sessions_and_awaiting_tokens_up_and_down(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0005")
    engine = create_engine(url)
    try:
        tables = MetaData()
        tables.reflect(engine)
        with engine.begin() as connection:
            connection.execute(
                tables.tables["tokens"].insert(),
                {"id": "a" * 12, "kind": "readonly", "secret_hash": "0" * 64, "note": "", "uses": 0,
                 "created_at": datetime.now(UTC)},
            )  # fmt: skip
    finally:
        engine.dispose()

    migrate.upgrade(url, "0006")
    assert "awaiting_approval" in _columns(url, "tokens")
    assert {"id", "secret_hash", "kind", "token_id", "env_admin_digest", "expires_at"} <= _columns(url, "sessions")
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT id, awaiting_approval FROM tokens")).all()
        assert [(r[0], bool(r[1])) for r in rows] == [("a" * 12, False)]  # existing tokens keep working
    finally:
        engine.dispose()

    migrate.downgrade(url, "0005")
    assert "awaiting_approval" not in _columns(url, "tokens") and _columns(url, "sessions") == set()
    assert "id" in _columns(url, "tokens")
