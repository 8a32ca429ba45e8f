"""The shipped language-model calibration (app/perfmodel/data/llm.json) is what `benchmarks.llm_accuracy
--write` makes of the saved CPU rounds and the GPU reference runs under the shipped CPU level: a change to
the level (a lab CPU added to the pairs file, a recalibration) that was not carried into it fails here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_rewriting_the_language_model_calibration_gives_the_shipped_file(tmp_path: Path) -> None:
    out = tmp_path / "llm.json"
    made = subprocess.run(
        [sys.executable, "-m", "benchmarks.llm_accuracy", "--write", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr[-3000:]
    rebuilt = json.loads(out.read_text())
    shipped = json.loads((ROOT / "app" / "perfmodel" / "data" / "llm.json").read_text())
    stale = "app/perfmodel/data/llm.json is stale: run `.venv/bin/python -m benchmarks.llm_accuracy --write`"
    assert _numbers_apart(rebuilt) == _numbers_apart(shipped), stale
    # the file keeps four significant digits, whose last can round the other way on another machine's
    # floating-point library
    assert _numbers(rebuilt) == pytest.approx(_numbers(shipped), rel=2e-3), stale


def _numbers_apart(value: Any) -> Any:
    """``value`` with every number replaced by None: its keys, lengths and text."""
    if isinstance(value, dict):
        return {key: _numbers_apart(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_apart(item) for item in value]
    return None if isinstance(value, int | float) and not isinstance(value, bool) else value


def _numbers(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [n for _key, item in sorted(value.items()) for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return [float(value)] if isinstance(value, int | float) and not isinstance(value, bool) else []
