from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect

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
