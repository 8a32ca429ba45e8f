"""Engines and sessions for the embedded SQLite default and for PostgreSQL.

SQLite runs in WAL mode with foreign keys on. Its write sessions begin with BEGIN IMMEDIATE so
that concurrent writers queue on the busy timeout instead of failing when a read lock would have
to be upgraded; read sessions stay deferred so readers never wait for writers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

SQLITE_BUSY_TIMEOUT_MS = 30_000


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def make_engine(url: str, *, pool_size: int = 10) -> Engine:
    if is_sqlite(url):
        return _sqlite_engine(url)
    return create_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size * 2,
        pool_pre_ping=True,
        pool_timeout=10,
        connect_args={"connect_timeout": 5},
    )


def _sqlite_engine(url: str) -> Engine:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        pool_size=8,
        max_overflow=16,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from pysqlite so that BEGIN is ours (see the module docstring).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


class Database:
    """One engine and the two session factories the server uses: reads and writes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        write_bind = self.engine.execution_options(sqlite_begin="IMMEDIATE") if is_sqlite(url) else self.engine
        self._write = sessionmaker(write_bind, expire_on_commit=False)
        self._writer_lock: AbstractContextManager[object] = threading.Lock() if is_sqlite(url) else nullcontext()

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(self.url)

    @contextmanager
    def reading(self) -> Iterator[Session]:
        with self._read() as session:
            yield session

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on any error.

        On SQLite, writers of this process also queue on a lock: the hand-over is immediate,
        where SQLite's own busy handler sleeps in growing steps and starves unlucky writers."""
        with self._writer_lock, self._write() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
