"""The agent's durable outbox: every result is on local disk before any upload is tried.

A SQLite file (stdlib sqlite3: the agent imports no server code) holds each run's header and its
results as they finish. A run is ``open`` while its job runs and ``ready`` once closed; ready runs
are uploaded, and deleted only after the server has stored them (201, or 200 for a run it already
had, so a retry never duplicates). At start, runs left open by a killed agent are closed as they
are: what was measured is kept and uploaded.

A run the server refuses (4xx: an unknown job, too large, invalid) would be refused again at every
try, so it is quarantined: kept in the file with the server's reason, left out of the uploads, and
listed by `hwadvisor agent outbox` (which can send it again). A file SQLite cannot read (torn by a
crash, overwritten) is renamed aside with a timestamp and a fresh outbox started, so the agent
starts; the old file is kept for salvage (`sqlite3 FILE .recover`).
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from app.contracts import MachineSpec, Result, RunReport
from app.errors import ConfigError

log = logging.getLogger("hwadvisor.agent")

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    job_id TEXT,
    suite TEXT NOT NULL,
    agent_version TEXT NOT NULL,
    machine TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    state TEXT NOT NULL CHECK (state IN ('open', 'ready'))
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS quarantine (
    run_id TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
    reason TEXT NOT NULL,
    status_code INTEGER,
    quarantined_at TEXT NOT NULL
);
"""
_UNREADABLE = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)

RunState = Literal["open", "ready", "quarantined"]


@dataclass(frozen=True)
class Quarantined:
    run_id: uuid.UUID
    job_id: uuid.UUID | None
    suite: str
    results: int
    reason: str
    status_code: int | None
    quarantined_at: datetime


class _Malformed(sqlite3.DatabaseError):
    """SQLite opened the file, but its own integrity check found damage."""


def _unreadable(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, _Malformed) or (code is not None and code & 0xFF in _UNREADABLE)


class Outbox:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.set_aside: Path | None = None
        """Where an unreadable file found at start was moved, if one was."""
        try:
            self._db = _connect(path)
        except sqlite3.DatabaseError as exc:
            if not _unreadable(exc):
                raise ConfigError(f"cannot open the agent's outbox {path}: {exc}") from exc
            self.set_aside = _set_aside(path)
            log.error(
                "the outbox %s could not be read (%s): moved aside to %s and a new, empty outbox started;"
                " runs it held were not uploaded (salvage: sqlite3 %s .recover)",
                path,
                exc,
                self.set_aside,
                self.set_aside,
            )
            self._db = _connect(path)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def open_run(self, *, suite: str, agent_version: str, machine: MachineSpec, job_id: uuid.UUID | None) -> uuid.UUID:
        run_id = uuid.uuid4()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (run_id, job_id, suite, agent_version, machine, started_at, state)"
                " VALUES (?, ?, ?, ?, ?, ?, 'open')",
                (
                    str(run_id),
                    str(job_id) if job_id else None,
                    suite,
                    agent_version,
                    machine.model_dump_json(),
                    datetime.now(UTC).isoformat(),
                ),
            )
        return run_id

    def add_result(self, run_id: uuid.UUID, seq: int, result: Result) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO results (run_id, seq, body) VALUES (?, ?, ?)",
                (str(run_id), seq, result.model_dump_json()),
            )

    def close_run(self, run_id: uuid.UUID) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET state = 'ready', finished_at = ? WHERE run_id = ? AND state = 'open'",
                (datetime.now(UTC).isoformat(), str(run_id)),
            )

    def recover(self) -> int:
        """Close runs a killed agent left open; returns how many."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE runs SET state = 'ready', finished_at = ? WHERE state = 'open'",
                (datetime.now(UTC).isoformat(),),
            )
            return cursor.rowcount

    def ready(self) -> list[RunReport]:
        """The runs to upload, oldest first. A run this agent cannot read back (a row written by
        another version, a damaged body) is quarantined here rather than stop every upload."""
        rows = self._db.execute(
            "SELECT run_id, job_id, suite, agent_version, machine, started_at, finished_at FROM runs"
            " WHERE state = 'ready' AND run_id NOT IN (SELECT run_id FROM quarantine) ORDER BY started_at"
        ).fetchall()
        reports = []
        for run_id, job_id, suite, version, machine, started, finished in rows:
            bodies = self._db.execute("SELECT body FROM results WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
            try:
                report = RunReport(
                    run_id=uuid.UUID(run_id),
                    job_id=uuid.UUID(job_id) if job_id else None,
                    suite=suite,
                    agent_version=version,
                    machine=MachineSpec.model_validate_json(machine),
                    started_at=datetime.fromisoformat(started),
                    finished_at=datetime.fromisoformat(finished),
                    results=[Result.model_validate_json(body) for (body,) in bodies],
                )
            except (ValueError, TypeError) as exc:
                reason = f"unreadable in the outbox: {str(exc).splitlines()[0][:300]}"
                log.error("run %s is quarantined, kept on disk in %s: %s", run_id, self.path, reason)
                self.quarantine(uuid.UUID(run_id), reason)
                continue
            reports.append(report)
        return reports

    def delete(self, run_id: uuid.UUID) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM runs WHERE run_id = ?", (str(run_id),))

    def pending(self) -> int:
        """Runs waiting to be uploaded (quarantined ones are not waiting)."""
        return int(
            self._db.execute(
                "SELECT count(*) FROM runs WHERE run_id NOT IN (SELECT run_id FROM quarantine)"
            ).fetchone()[0]
        )

    # ------------------------------------------------------------------ quarantine

    def quarantine(self, run_id: uuid.UUID, reason: str, status_code: int | None = None) -> None:
        """Keep the run, with why, but stop offering it for upload."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO quarantine (run_id, reason, status_code, quarantined_at) VALUES (?, ?, ?, ?)",
                (str(run_id), reason, status_code, datetime.now(UTC).isoformat()),
            )

    def quarantined(self) -> list[Quarantined]:
        rows = self._db.execute(
            "SELECT q.run_id, r.job_id, r.suite, (SELECT count(*) FROM results s WHERE s.run_id = q.run_id),"
            " q.reason, q.status_code, q.quarantined_at FROM quarantine q JOIN runs r USING (run_id)"
            " ORDER BY q.quarantined_at"
        ).fetchall()
        return [
            Quarantined(
                run_id=uuid.UUID(run_id),
                job_id=uuid.UUID(job_id) if job_id else None,
                suite=suite,
                results=int(count),
                reason=reason,
                status_code=status_code,
                quarantined_at=datetime.fromisoformat(at),
            )
            for run_id, job_id, suite, count, reason, status_code, at in rows
        ]

    def release(self, run_id: uuid.UUID | None = None) -> int:
        """Offer quarantined runs (one, or all) for upload again; how many."""
        with self._transaction() as db:
            if run_id is None:
                return db.execute("DELETE FROM quarantine").rowcount
            return db.execute("DELETE FROM quarantine WHERE run_id = ?", (str(run_id),)).rowcount

    def state_of(self, run_id: uuid.UUID) -> RunState | None:
        """open, ready or quarantined; None once uploaded (or never here)."""
        row = self._db.execute(
            "SELECT r.state, q.run_id IS NOT NULL FROM runs r LEFT JOIN quarantine q USING (run_id) WHERE r.run_id = ?",
            (str(run_id),),
        ).fetchone()
        if row is None:
            return None
        state: RunState = "quarantined" if row[1] else row[0]
        return state


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")  # a result acknowledged here survives power loss
        db.execute("PRAGMA foreign_keys=ON")
        problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _Malformed(f"database disk image is malformed: {'; '.join(problems[:3])}")
        db.executescript(SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


def _set_aside(path: Path) -> Path:
    """Rename the file (with its WAL and shared-memory files) to NAME.corrupt-<UTC time>."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.replace(aside.with_name(aside.name + suffix))
    return aside
