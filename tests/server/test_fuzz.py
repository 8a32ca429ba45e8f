"""A short Schemathesis run over the whole OpenAPI schema against a real server process (the full
run, with its figures, is benchmarks/fuzz.py and docs/RELIABILITY.md): no 5xx, every answer as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fuzzing_the_api_finds_no_server_error_and_no_undocumented_answer(tmp_path: Path) -> None:
    # Schemathesis' state (cache, crashes, examples) in the test's own folder: none read from an
    # earlier run, none left in the checkout
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.fuzz", "--max-examples", "5", "--state-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert done.stdout.count("passed") >= 3  # the admin, machine and enrollment passes all ran
