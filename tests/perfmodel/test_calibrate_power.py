"""The shipped power calibration is what scripts/calibrate_power.py makes of the datasets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)


@pytest.mark.slow
@pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent: power.json cannot be rebuilt")
def test_recalibrating_from_the_datasets_gives_the_shipped_file(tmp_path: Path) -> None:
    out = tmp_path / "power.json"
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "calibrate_power.py"), "--datasets", str(DATASETS), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    shipped = json.loads((ROOT / "app" / "perfmodel" / "data" / "power.json").read_text())
    # the same to nine significant digits: a fit's last bits follow the machine's floating-point library
    assert _rounded(json.loads(out.read_text())) == _rounded(shipped)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value
