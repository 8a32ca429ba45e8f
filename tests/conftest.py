"""Shared fixtures: a migrated database per backend (SQLite always, PostgreSQL when configured),
emptied after every test, and an API client on the real app."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import Base
from testkit.factories import Api

# Keep the tests' files (ONNX exports, databases) out of the user's data directory, and remove
# them afterwards: the exports alone are over a gigabyte.
if "HWADVISOR_DATA_DIR" not in os.environ:
    _DATA_DIR = tempfile.mkdtemp(prefix="hwadvisor-tests-")
    os.environ["HWADVISOR_DATA_DIR"] = _DATA_DIR
    atexit.register(shutil.rmtree, _DATA_DIR, ignore_errors=True)

PG_ENV = "HWADVISOR_TEST_DATABASE_URL"
PG_URL = os.environ.get(PG_ENV)

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not PG_URL, reason=f"set {PG_ENV} to run against PostgreSQL"),
        ],
    ),
]

ONE_BACKEND = [pytest.param("postgres", id="postgres") if PG_URL else pytest.param("sqlite", id="sqlite")]
"""For the slowest process-level tests whose subject is not the database: PostgreSQL where it is
configured (as in CI: it is what production runs, and where more goes wrong), else SQLite; the
database layer under them is tested on both backends."""


def _pg_url() -> str:
    """The configured PostgreSQL URL, read through Settings so the driver rule is the app's."""
    assert PG_URL
    return Settings(database_url=PG_URL).resolved_database_url


class ScratchDatabases:
    """Fresh, empty databases for a test session: SQLite files, or PostgreSQL databases made
    on the configured server and dropped at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.made: list[str] = []

    def new(self, backend: str) -> str:
        if backend == "sqlite":
            return f"sqlite:///{self.tmp / f'hwadvisor-{secrets.token_hex(4)}.db'}"
        admin = make_url(_pg_url())
        # eight random bytes: three collided once in CI (DuplicateDatabase) among a worker's few hundred
        name = f"hwadvisor_test_{os.getpid()}_{secrets.token_hex(8)}"
        engine = create_engine(admin, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
        self.made.append(name)
        return admin.set(database=name).render_as_string(hide_password=False)

    def drop_all(self) -> None:
        if not self.made:
            return
        engine = create_engine(make_url(_pg_url()), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            for name in self.made:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScratchDatabases]:
    databases = ScratchDatabases(tmp_path_factory.mktemp("db"))
    yield databases
    databases.drop_all()


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, scratch: ScratchDatabases) -> str:
    """A migrated database, one per backend for the whole session."""
    url = scratch.new(request.param)
    migrate.upgrade(url)
    return url


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    """The database, emptied after the test so that every test starts from nothing."""
    database = Database(database_url)
    try:
        yield database
    finally:
        with database.writing() as session:
            for table in reversed(Base.metadata.sorted_tables):
                session.execute(table.delete())
        database.dispose()


ADMIN_TOKEN = "test-admin-" + secrets.token_hex(16)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(database_url=database_url, admin_token=ADMIN_TOKEN, data_dir=tmp_path)


@pytest.fixture
def api(db: Database, settings: Settings) -> Iterator[Api]:
    """The real app (routes, auth, error mapping, limits) in-process, on the test database."""
    from fastapi.testclient import TestClient

    from app.server.app import create_app

    with TestClient(create_app(settings, database=db)) as client:
        yield Api(client, ADMIN_TOKEN)
