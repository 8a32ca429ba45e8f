"""Engines and sessions for the embedded SQLite default and for PostgreSQL.

SQLite runs in WAL mode with foreign keys on. Its write sessions begin with BEGIN IMMEDIATE so
that concurrent writers queue on the busy timeout instead of failing when a read lock would have
to be upgraded; read sessions stay deferred so readers never wait for writers.

A write is acknowledged only if it can outlive the process: an open SQLite connection keeps writing
to a file that was deleted or replaced (and the data is gone at the next start), so every session
first checks that the file at the path is still the one opened, and every write that the file and
its folder can still be written; a read-only database (SQLite or PostgreSQL) is named as such.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from app.errors import DatabaseUnavailable

log = logging.getLogger("hwadvisor.db")

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


def sqlite_file(url: str) -> Path | None:
    """The SQLite database's file, absolute; None for PostgreSQL and in-memory databases."""
    if not is_sqlite(url):
        return None
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).absolute()


def _sqlite_engine(url: str) -> Engine:
    file = sqlite_file(url)
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
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


SQLITE_READONLY = 8  # the primary result code: 'attempt to write a readonly database'
PG_READ_ONLY_SQL_TRANSACTION = "25006"  # a read-only database, or a standby
RESTORE_HINT = "restore the database file and restart the server; agents keep what was refused and send it again"
PRIMARY_HINT = "point the server at a writable primary; agents keep what was refused and send it again"


def _read_only_error(exc: DBAPIError) -> bool:
    code = getattr(exc.orig, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF == SQLITE_READONLY:
        return True
    return getattr(exc.orig, "sqlstate", None) == PG_READ_ONLY_SQL_TRANSACTION


class Database:
    """One engine and the two session factories the server uses: reads and writes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        write_bind = self.engine.execution_options(sqlite_begin="IMMEDIATE") if is_sqlite(url) else self.engine
        self._write = sessionmaker(write_bind, expire_on_commit=False)
        self._writer_lock: AbstractContextManager[object] = threading.Lock() if is_sqlite(url) else nullcontext()
        self.file = sqlite_file(url)
        self._opened: tuple[int, int] | None = None  # (device, inode) of the file the first connection opened
        self._reported: str | None = None
        if self.file is not None:
            event.listen(self.engine, "connect", self._remember_file)

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(self.url)

    @property
    def _hint(self) -> str:
        return RESTORE_HINT if self.is_sqlite else PRIMARY_HINT

    def _remember_file(self, _dbapi_connection: Any, _record: Any) -> None:
        if self._opened is None and self.file is not None:
            try:
                opened = os.stat(self.file)
            except OSError:
                return
            self._opened = (opened.st_dev, opened.st_ino)

    def lost_file(self) -> str | None:
        """Why the SQLite file at the path is no longer the one this process writes to, or None."""
        if self.file is None:
            return None
        try:
            now = os.stat(self.file)
        except FileNotFoundError:
            return f"the database file {self.file.name} is gone: it was removed while the server ran"
        except OSError as exc:
            return f"the database file {self.file.name} cannot be checked: {exc.strerror}"
        if self._opened is not None and (now.st_dev, now.st_ino) != self._opened:
            return f"the database file {self.file.name} was replaced while the server ran"
        return None

    def unwritable(self) -> str | None:
        """Why a write committed now would not be durable, or None (SQLite: from the file system)."""
        if self.file is None:
            return None
        lost = self.lost_file()
        if lost is not None:
            return lost
        if not os.access(self.file, os.W_OK):
            return f"the database file {self.file.name} is read-only"
        if not os.access(self.file.parent, os.W_OK | os.X_OK):
            return "the database file's folder is read-only"
        return None

    def _refuse(self, problem: str) -> DatabaseUnavailable:
        """The 503 to raise; the log (once per problem) has the full path, the answer only the file's name."""
        if problem != self._reported:
            self._reported = problem
            log.error("%s (%s): refusing writes until it is fixed", problem, self.file or make_url(self.url).database)
        return DatabaseUnavailable(problem, hint=self._hint)

    def check_file(self) -> None:
        """Refuse (503) to answer from a SQLite file that is no longer the one at the path."""
        problem = self.lost_file()
        if problem is not None:
            raise self._refuse(problem)

    def check_writable(self, session: Session | None = None) -> None:
        """Refuse (503) when writes cannot be durable; with a session, PostgreSQL is asked too."""
        problem = self.unwritable()
        if problem is None and session is not None and not self.is_sqlite:
            read_only = session.scalar(
                text("SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'")
            )
            if read_only:
                problem = "the database is read-only (a standby, or default_transaction_read_only is on)"
        if problem is not None:
            raise self._refuse(problem)
        self._reported = None

    @contextmanager
    def reading(self) -> Iterator[Session]:
        self.check_file()
        with self._read() as session:
            yield session

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on any error.

        On SQLite, writers of this process also queue on a lock: the hand-over is immediate,
        where SQLite's own busy handler sleeps in growing steps and starves unlucky writers.
        The file is checked again just before the commit: a write is never acknowledged to a
        file that is gone or read-only (see the module docstring)."""
        self.check_writable()
        try:
            with self._writer_lock, self._write() as session, session.begin():
                yield session
                self.check_writable()
        except DBAPIError as exc:
            if _read_only_error(exc):
                raise self._refuse("the database is read-only") from exc
            raise

    def dispose(self) -> None:
        self.engine.dispose()
