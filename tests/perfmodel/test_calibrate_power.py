"""The shipped power calibration is what scripts/calibrate_power.py makes of the datasets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)


@pytest.mark.slow
@pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent: power.json cannot be rebuilt")
def test_recalibrating_from_the_datasets_gives_the_shipped_file_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "power.json"
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "calibrate_power.py"), "--datasets", str(DATASETS), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    assert out.read_bytes() == (ROOT / "app" / "perfmodel" / "data" / "power.json").read_bytes()
