"""What reading every row back costs `hwadvisor db import`: the same export imported with and without it,
side by side in one run.

    .venv/bin/python -m benchmarks.import_speed [--results 40000] [--rounds 3]

Seeds a SQLite database with one machine and ``results`` results (runs of 10,000), exports it, then
imports the export into fresh SQLite databases, alternately as shipped (app/db/verify.py reads every row
back as the API would before the transaction commits) and with the read-back skipped, ``rounds`` times
each. Prints each one's median seconds and their ratio.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from pathlib import Path

from app.db import dump, migrate, runs, verify
from app.db.engine import Database
from testkit.factories import enrolled, machine_spec, result, run_report

PER_RUN = 10_000


def seeded(url: str, count: int) -> Database:
    db = Database(url)
    migrate.upgrade(db.url)
    spec = machine_spec()
    machine_id = enrolled(db, spec)
    for n in range(0, count, PER_RUN):
        batch = [result(batch_size=b + 1, threads=n // PER_RUN + 1) for b in range(min(PER_RUN, count - n))]
        runs.ingest(db, machine_id=machine_id, report=run_report(spec, results=batch))
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=int, default=40_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    shipped = verify.check
    ways = {"with the read-back": shipped, "without it": lambda _session: None}
    times: dict[str, list[float]] = {name: [] for name in ways}
    with tempfile.TemporaryDirectory() as tmp:
        source = seeded(f"sqlite:///{tmp}/source.db", args.results)
        exported = io.StringIO()
        counts = dump.export(source, exported)
        source.dispose()
        text = exported.getvalue()
        try:
            for k in range(args.rounds):
                for way, (name, check) in enumerate(ways.items()):
                    verify.check = check
                    target = Database(f"sqlite:///{Path(tmp) / f'import-{k}-{way}.db'}")
                    migrate.upgrade(target.url)
                    start = time.perf_counter()
                    dump.import_(target, io.StringIO(text))
                    times[name].append(time.perf_counter() - start)
                    target.dispose()
        finally:
            verify.check = shipped
    print(f"{counts['results']:,} results, {sum(counts.values()):,} rows, imported {args.rounds} times each way")
    with_it, without = (statistics.median(times[name]) for name in ways)
    print(f"with the read-back {with_it:.2f} s, without it {without:.2f} s: {with_it / without:.2f}x")


if __name__ == "__main__":
    main()
