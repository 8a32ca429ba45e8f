"""Fuzz the whole API from its OpenAPI schema with Schemathesis, against a real server process.

    .venv/bin/python -m benchmarks.fuzz [--max-examples 50] [--postgres URL] [--state-dir DIR]

The server (SQLite, or PostgreSQL with --postgres) is seeded with machines, runs and jobs so that
generated requests meet data, then every operation is called with generated valid and invalid
input (positive and negative phases), as the admin. Checks: no 5xx (not_a_server_error), every
answer matches its documented schema, status code and content type. The summary goes to
docs/RELIABILITY.md.

Generation from the schema is taught the input that once made 500s and that it would almost never
produce by chance (benchmarks/fuzz_hooks.py, loaded through SCHEMATHESIS_HOOKS): NUL characters in
body strings and keys, query and path parameters; naive and out-of-range date-times; JSON nested
hundreds of levels deep and text (a suite's TOML) thousands.

Schemathesis keeps state between runs (a cache with the crashes `schemathesis replay` re-sends, and
Hypothesis' example database). By default it stays where the tools put it, in the ignored
`.schemathesis/` and `.hypothesis/` of the working directory; --state-dir puts both in DIR instead,
which the test suite uses so that a run neither reads an earlier run's state nor leaves any behind.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from app.db import migrate
from testkit.factories import Api
from testkit.lab import build
from testkit.processes import ADMIN, ServerProcess

HOOKS = Path(__file__).with_name("fuzz_hooks.py")
CHECKS = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"


def _state_in(state_dir: Path) -> tuple[list[str], dict[str, str]]:
    """Schemathesis' options and environment that keep its state in ``state_dir``: its cache
    directory is set only in a config file, so one is written there; Hypothesis (its examples and
    its own caches) follows HYPOTHESIS_STORAGE_DIRECTORY."""
    state_dir = state_dir.resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    config = state_dir / "schemathesis.toml"
    # a JSON string (non-ASCII kept as is) is a TOML basic string
    cache = json.dumps(str(state_dir / "cache"), ensure_ascii=False)
    config.write_text(f"[cache]\ndirectory = {cache}\n", encoding="utf-8")
    return ["--config-file", str(config)], {"HYPOTHESIS_STORAGE_DIRECTORY": str(state_dir / "hypothesis")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--postgres", help="Fuzz against this PostgreSQL database (emptied first).")
    parser.add_argument("--state-dir", type=Path, help="Keep Schemathesis' cache and example database here.")
    args = parser.parse_args()
    config, state_env = _state_in(args.state_dir) if args.state_dir else ([], {})
    with tempfile.TemporaryDirectory() as tmp:
        url = args.postgres or f"sqlite:///{Path(tmp) / 'hwadvisor.db'}"
        if args.postgres:
            migrate.downgrade(url, "base")
        migrate.upgrade(url)
        # a high failure allowance: the fuzzer sends many bad tokens on purpose
        server = ServerProcess(url, Path(tmp), env={"HWADVISOR_AUTH_FAILURES_PER_WINDOW": "100000"}).start()
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                api = Api(client, ADMIN)
                build(api)
                _machine_id, machine_token = api.enroll()
                enrollment = api.token("enrollment")
            # who calls what: the admin everything but the agents' routes, a machine token those,
            # an enrollment token the enrolment
            passes = [
                ("admin", ADMIN, ["--exclude-path-regex", "^/api/v1/(agents/|runs$)"]),
                ("machine", machine_token, ["--include-path-regex", "^/api/v1/(agents/(heartbeat|claim|jobs)|runs$)"]),
                ("enrollment", enrollment, ["--include-path-regex", "^/api/v1/agents/enroll$"]),
            ]
            failed = 0
            for who, token, selection in passes:
                command = [
                    str(Path(sys.executable).parent / "schemathesis"),
                    *config,
                    "run",
                    f"{server.url}/openapi.json",
                    *selection,
                    "--header",
                    f"Authorization: Bearer {token}",
                    "--checks",
                    CHECKS,
                    "--max-examples",
                    str(args.max_examples),
                    "--phases",
                    "examples,coverage,fuzzing",
                    # one worker: with two, Schemathesis's coverage phase hits a thread-safety error of its own
                    "--workers",
                    "1",
                    "--seed",
                    "20261122",
                    "--suppress-health-check",
                    "all",
                ]
                print(f"\n### as {who}: " + " ".join(command).replace(token, "<token>"), flush=True)
                env = {**os.environ, **state_env, "SCHEMATHESIS_HOOKS": str(HOOKS)}
                failed += subprocess.run(command, check=False, env=env).returncode != 0
        finally:
            server.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
