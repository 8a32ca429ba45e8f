"""A short Schemathesis run over the whole OpenAPI schema against a real server process (the full
run, with its figures, is benchmarks/fuzz.py and docs/RELIABILITY.md): no 5xx, every answer as
documented, on SQLite and on PostgreSQL. The run sends the classes of input that once made 500s
(benchmarks/fuzz_hooks.py); that it can, each class, is checked here too."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, find, settings

from tests.conftest import ONE_BACKEND, ScratchDatabases

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("backend", ONE_BACKEND)
def test_fuzzing_the_api_finds_no_server_error_and_no_undocumented_answer(
    tmp_path: Path, scratch: ScratchDatabases, backend: str
) -> None:
    # Schemathesis' state (cache, crashes, examples) in the test's own folder: none read from an
    # earlier run, none left in the checkout
    database = ["--postgres", scratch.new("postgres")] if backend == "postgres" else []
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.fuzz", "--max-examples", "5", "--state-dir", str(tmp_path), *database],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert done.stdout.count("passed") >= 3  # the admin, machine and enrollment passes all ran


# --------------------------------------------------------------------------- what the hooks send

QUICK = settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck))
BODY: dict[str, Any] = {"spec": {"hostname": "node-1", "labels": {"gpu": "h100"}}, "suite_toml": "name = 'q'", "n": 3}


def _has_nul(value: Any) -> bool:
    return "\\u0000" in json.dumps(value)


def _spec(body: Any) -> dict[str, Any]:
    spec = body.get("spec")
    return spec if isinstance(spec, dict) else {}


def _depth(value: Any) -> int:
    return 1 + max(map(_depth, value), default=0) if isinstance(value, list) else 0


def test_the_fuzzer_sends_nul_in_body_values_and_keys() -> None:
    from benchmarks.fuzz_hooks import flatmap_body

    strategy = flatmap_body(None, BODY)
    in_value = find(strategy, lambda b: _has_nul(_spec(b).get("hostname")), settings=QUICK)
    assert "\x00" in in_value["spec"]["hostname"]
    in_key = find(strategy, lambda b: any("\x00" in k for k in _spec(b).get("labels", {})), settings=QUICK)
    assert in_key["spec"]["labels"] != BODY["spec"]["labels"]
    assert find(strategy, lambda b: b == BODY, settings=QUICK) == BODY  # and leaves bodies as they are too


def test_the_fuzzer_sends_deep_nesting_as_json_and_as_text() -> None:
    from benchmarks.fuzz_hooks import DEPTH_JSON, DEPTH_TEXT, flatmap_body

    strategy = flatmap_body(None, BODY)
    deep = find(strategy, lambda b: isinstance(b.get("n"), list), settings=QUICK)
    assert _depth(deep["n"]) == DEPTH_JSON
    text = find(strategy, lambda b: str(b.get("suite_toml")).count("[") > 100, settings=QUICK)
    assert "[" * DEPTH_TEXT in text["suite_toml"]


def test_the_fuzzer_sends_nul_in_query_and_path_parameters() -> None:
    from benchmarks.fuzz_hooks import flatmap_path_parameters, flatmap_query

    query = find(flatmap_query(None, {"workload": "resnet50", "limit": 5}), _has_nul, settings=QUICK)
    assert "\x00" in query["workload"] and query["limit"] == 5
    path = find(flatmap_path_parameters(None, {"token_id": "abc"}), _has_nul, settings=QUICK)
    assert "\x00" in path["token_id"]


def test_the_fuzzer_sends_naive_and_out_of_range_date_times() -> None:
    from benchmarks.fuzz_hooks import DATE_TIMES

    def outside_utc(text: str) -> bool:
        value = datetime.fromisoformat(text)
        if value.tzinfo is None:
            return False
        try:
            value.astimezone(UTC)
        except OverflowError:
            return True
        return False

    assert datetime.fromisoformat(find(DATE_TIMES, lambda t: "+" not in t[10:] and "-" not in t[10:])).tzinfo is None
    assert outside_utc(find(DATE_TIMES, outside_utc, settings=QUICK))
    assert datetime.fromisoformat(find(DATE_TIMES, lambda t: t.endswith("+00:00"))).tzinfo is not None
