"""Migration 0007 (an admin's catalog entry for a machine's device), up and down on each backend."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import MetaData, create_engine, event, inspect, text
from sqlalchemy.exc import IntegrityError

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_catalog_pins_up_and_down_and_gone_with_their_machine(backend: str, scratch: ScratchDatabases) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0006")
    assert "catalog_pins" not in _tables(url)
    migrate.upgrade(url, "0007")
    machine = uuid.uuid4().hex
    now = datetime.now(UTC)
    engine = create_engine(url)
    if backend == "sqlite":  # as the app's engine does (app/db/engine.py): SQLite leaves them off
        event.listen(engine, "connect", lambda connection, _record: connection.execute("PRAGMA foreign_keys=ON"))
    try:
        tables = MetaData()
        tables.reflect(engine)
        with engine.begin() as connection:
            connection.execute(
                tables.tables["machines"].insert(),
                {
                    "id": machine,
                    "fingerprint": "f",
                    "hostname": "h",
                    "status": "online",
                    "labels": {},
                    "created_at": now,
                },
            )
            pin = {
                "machine_id": machine,
                "device": "cpu",
                "catalog_id": "epyc-9654",
                "pinned_by": "x",
                "pinned_at": now,
            }
            connection.execute(tables.tables["catalog_pins"].insert(), pin)
            with pytest.raises(IntegrityError), connection.begin_nested():
                connection.execute(tables.tables["catalog_pins"].insert(), pin)  # one pin per device
            connection.execute(tables.tables["machines"].delete())
            assert connection.execute(text("SELECT count(*) FROM catalog_pins")).scalar() == 0
    finally:
        engine.dispose()
    migrate.downgrade(url, "0006")
    assert "catalog_pins" not in _tables(url) and "machines" in _tables(url)
