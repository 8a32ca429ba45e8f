"""Fuzz the whole API from its OpenAPI schema with Schemathesis, against a real server process.

    .venv/bin/python -m benchmarks.fuzz [--max-examples 50] [--postgres URL]

The server (SQLite, or PostgreSQL with --postgres) is seeded with machines, runs and jobs so that
generated requests meet data, then every operation is called with generated valid and invalid
input (positive and negative phases), as the admin. Checks: no 5xx (not_a_server_error), every
answer matches its documented schema, status code and content type. The summary goes to
docs/RELIABILITY.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from app.db import migrate
from tests.factories import Api
from tests.processes import ADMIN, ServerProcess
from tests.recommender.lab import build

CHECKS = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--postgres", help="Fuzz against this PostgreSQL database (emptied first).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.postgres or f"sqlite:///{Path(tmp) / 'hwadvisor.db'}"
        if args.postgres:
            migrate.downgrade(url, "base")
        migrate.upgrade(url)
        # a high failure allowance: the fuzzer sends many bad tokens on purpose
        server = ServerProcess(url, Path(tmp), env={"HWADVISOR_AUTH_FAILURES_PER_WINDOW": "100000"}).start()
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                build(Api(client, ADMIN))
            command = [
                str(Path(sys.executable).parent / "schemathesis"),
                "run",
                f"{server.url}/openapi.json",
                "--header",
                f"Authorization: Bearer {ADMIN}",
                "--checks",
                CHECKS,
                "--max-examples",
                str(args.max_examples),
                "--phases",
                "examples,coverage,fuzzing",
                "--workers",
                "2",
                "--seed",
                "20261122",
                "--suppress-health-check",
                "all",
            ]
            print(" ".join(command).replace(ADMIN, "<admin token>"), flush=True)
            done = subprocess.run(command, check=False)
        finally:
            server.stop()
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
