"""Fit the data-parallel scaling model and write app/perfmodel/data/scaling.json.

    PYTHONPATH=$PWD python scripts/calibrate_scaling.py [--datasets ../shared/datasets] [--out DIR]

Fits the three parameters of app/perfmodel/scaling.py (link efficiency, overlap, cost per ring hop)
on Lambda 2022 and 2024's 2x/4x/8x training rows that have a measured 1-GPU row of the same part
(read from the datasets folder: the package ships the 1-GPU rows only), then measures the band: each
config predicted with the parameters fitted without it (leave one config out), the 90% quantile of
those absolute log errors (app/perfmodel/bands.py).

Nothing from Lambda's 2025 rerun (v2_2025) is read: it is the forward test of
benchmarks/scaling_accuracy.py.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict
from pathlib import Path

from app.catalog import load
from app.perfmodel import bands, scaling
from benchmarks.lambda_multi import published
from benchmarks.scaling_accuracy import FITTED_ON, leave_one_config_out, measured, measured_cases

ROOT = Path(__file__).resolve().parents[1]


def calibrate(datasets: Path) -> dict[str, object]:
    catalog = {e.id: e for e in load()}
    rows = [r for version in FITTED_ON for r in published(datasets, catalog, version)]
    cases = measured_cases(rows, catalog)
    params = scaling.fit(cases)
    held = leave_one_config_out(rows, catalog, measured)
    band = bands.quantile([abs(math.log(p.model / p.row.throughput)) for p in held])
    return {
        "generated_by": "scripts/calibrate_scaling.py",
        "params": {k: float(f"{v:.4g}") for k, v in asdict(params).items()},
        "band": None if band is None else float(f"{band:.4g}"),
        "cases": len(cases),
        "fitted_on": [f"lambda-dl-benchmark {v} 2x/4x/8x rows with a 1-GPU row of the part" for v in FITTED_ON],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=ROOT / "app" / "perfmodel" / "data")
    args = parser.parse_args()
    if not (args.datasets / "lambda-dl-benchmark").is_dir():
        parser.error(f"no lambda-dl-benchmark folder in {args.datasets}: pass --datasets /path/to/shared/datasets")
    result = calibrate(args.datasets)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "scaling.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}: {result['cases']} rows, parameters {result['params']}, band {result['band']}")


if __name__ == "__main__":
    main()
