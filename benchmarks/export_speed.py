"""The CSV export's cost per row, and what a client that asks and never reads costs the server.

    .venv/bin/python -m benchmarks.export_speed [--rows 40000]

Side by side in one run, on one SQLite database seeded over the real server's API:
1. Rows per second of ``results.iter_csv`` with the NUL re-check of every string a row read from the
   database passed on the way in (as before) and without it (``ResultRead.refuses_nul``).
2. The work before a stalled client's stream blocks: the first page, at 2,000 rows (as before) and at
   ``results.FIRST_PAGE`` rows.
3. Against the server process: a plain export's wall time; then 40 clients that ask for the export and
   never read: while they hold their streams, how long a five-row query of the results takes (three
   times; the exports build their pages on their own threads, ``routes.results.EXPORT_THREADS``); once
   they are gone, the time until a new export's first byte and its last.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

import httpx

from app.contracts import ResultRead
from app.db import migrate, results
from app.db.engine import Database
from testkit.factories import Api, machine_spec, result, run_report
from testkit.processes import ADMIN, ADMIN_HEADERS, server_process, stalled_reader

STALLED = 40
PER_RUN = 2000


def _seed(base: str, rows: int) -> None:
    spec = machine_spec()
    with httpx.Client(base_url=base, timeout=120) as http:
        _machine_id, token = Api(http, ADMIN).enroll(spec)
        body = run_report(spec, results=[result(batch_size=b) for b in range(1, PER_RUN + 1)])
        headers = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
        for _ in range(max(1, rows // PER_RUN)):
            report = body.model_copy(update={"run_id": uuid.uuid4()})
            http.post("/api/v1/runs", content=report.model_dump_json(), headers=headers).raise_for_status()


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=40_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'export.db'}"
        migrate.upgrade(url)
        with server_process(url, Path(tmp)) as base:
            _seed(base, args.rows)
            db = Database(url)
            where = results.ResultFilter()
            stored = sum(text.count("\n") for text in results.iter_csv(db, where)) - 1
            out(f"# {stored:,} results on SQLite")
            for name, refuses in (("with the NUL re-check (before)", True), ("without (now)", False)):
                ResultRead.refuses_nul = refuses
                seconds = _timed(lambda: list(results.iter_csv(db, where)))
                out(f"iter_csv {name}: {stored / seconds:,.0f} rows/s")
            ResultRead.refuses_nul = False
            for first in (2000, results.FIRST_PAGE):
                results.FIRST_PAGE = first
                seconds = _timed(lambda: next(results.iter_csv(db, where)))
                out(f"first page of {first:,} rows: {seconds * 1000:,.0f} ms")
            db.dispose()
            with httpx.Client(base_url=base, timeout=300) as http:
                plain = _timed(lambda: http.get("/api/v1/results/export.csv", headers=ADMIN_HEADERS).raise_for_status())
                out(f"server: a plain export {plain:.1f} s")
                with ExitStack() as stack:
                    for _ in range(STALLED):
                        stack.enter_context(stalled_reader(base, "/api/v1/results/export.csv"))
                    time.sleep(5)
                    queries = [
                        _timed(
                            lambda: http.get(
                                "/api/v1/results", params={"limit": 5}, headers=ADMIN_HEADERS
                            ).raise_for_status()
                        )
                        for _ in range(3)
                    ]
                    out(
                        f"server, while {STALLED} clients hold their exports unread: a 5-row query "
                        + ", ".join(f"{q:.2f} s" for q in queries)
                    )
                start = time.perf_counter()
                with http.stream("GET", "/api/v1/results/export.csv", headers=ADMIN_HEADERS) as response:
                    chunks = response.iter_bytes()
                    next(chunks)
                    first_byte = time.perf_counter() - start
                    for _ in chunks:
                        pass
                out(
                    f"server, after {STALLED} clients asked and never read: first byte {first_byte:.1f} s, "
                    f"whole export {time.perf_counter() - start:.1f} s"
                )


if __name__ == "__main__":
    main()
