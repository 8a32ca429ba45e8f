"""The agent's durable outbox: every result is on local disk before any upload is tried.

A SQLite file (stdlib sqlite3: the agent imports no server code) holds each run's header and its
results as they finish. A run is ``open`` while its job runs and ``ready`` once closed; ready runs
are uploaded, and deleted only after the server has stored them (201, or 200 for a run it already
had, so a retry never duplicates). At start, runs left open by a killed agent are closed as they
are: what was measured is kept and uploaded.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from app.contracts import MachineSpec, Result, RunReport

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
"""


class Outbox:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a result acknowledged here survives power loss
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(SCHEMA)

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
        rows = self._db.execute(
            "SELECT run_id, job_id, suite, agent_version, machine, started_at, finished_at FROM runs"
            " WHERE state = 'ready' ORDER BY started_at"
        ).fetchall()
        reports = []
        for run_id, job_id, suite, version, machine, started, finished in rows:
            bodies = self._db.execute("SELECT body FROM results WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
            reports.append(
                RunReport(
                    run_id=uuid.UUID(run_id),
                    job_id=uuid.UUID(job_id) if job_id else None,
                    suite=suite,
                    agent_version=version,
                    machine=MachineSpec.model_validate_json(machine),
                    started_at=datetime.fromisoformat(started),
                    finished_at=datetime.fromisoformat(finished),
                    results=[Result.model_validate_json(body) for (body,) in bodies],
                )
            )
        return reports

    def delete(self, run_id: uuid.UUID) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM runs WHERE run_id = ?", (str(run_id),))

    def pending(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])
