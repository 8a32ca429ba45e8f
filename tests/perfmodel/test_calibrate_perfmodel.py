"""The shipped performance-model calibration is what scripts/calibrate_perfmodel.py makes of the shipped
published results: a change to the model that was not recalibrated fails here, not in a user's figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_recalibrating_gives_the_shipped_parameters(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "calibrate_perfmodel.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    rebuilt = json.loads((tmp_path / "params.json").read_text())
    shipped = json.loads((ROOT / "app" / "perfmodel" / "data" / "params.json").read_text())
    assert _keys(rebuilt) == _keys(shipped)
    # the file keeps four significant digits; a fit's last bits follow the machine's floating-point
    # library, which can round the fourth digit the other way
    numbers = [(a, b) for a, b in zip(_leaves(rebuilt), _leaves(shipped), strict=True) if not isinstance(b, str)]
    assert [a for a, _ in numbers] == pytest.approx([b for _, b in numbers], rel=2e-3)
    assert [a for a in _leaves(rebuilt) if isinstance(a, str)] == [b for b in _leaves(shipped) if isinstance(b, str)]


def _keys(value: Any, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [k for key, item in sorted(value.items()) for k in _keys(item, f"{prefix}/{key}")]
    return [prefix]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [n for _key, item in sorted(value.items()) for n in _leaves(item)]
    return [value]
