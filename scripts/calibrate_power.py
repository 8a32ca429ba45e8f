"""Calibrate the power model and write app/perfmodel/data/power.json.

Run from the repository root:

    python scripts/calibrate_power.py [--datasets ../shared/datasets] [--idle FILE ...]
                                      [--without-reference-runs] [--observations lab.csv]
                                      [--out app/perfmodel/data/power.json]

Reads the MLPerf Inference Power pairs and codecarbon's CPU TDPs in the datasets folder, idle
readings of real GPUs (``nvidia-smi -q`` outputs; by default the H100 captured in
tests/fixtures/machines/h100), the NVML readings of hwadvisor's GPU reference runs
(app/perfmodel/reference_readings.py; not with --without-reference-runs), and, with --observations,
the lab's readings as a CSV with columns
catalog_id, compute_util, memory_util, watts[, label] (mean NVML or RAPL power of a result, with the
utilisations the performance model gives its config). Fits the parameters, holds each part out in
turn for the band, learns the cap exponent, and writes them with where they came from and how well
they predict. Deterministic: the same inputs give the same file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from app.perfmodel import reference_readings
from app.perfmodel.power_calibration import calibrate, gather
from app.perfmodel.readings import idle_readings, observations_csv

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "app" / "perfmodel" / "data" / "power.json"
IDLE = (ROOT / "tests" / "fixtures" / "machines" / "h100" / "nvidia-smi-q.txt",)


def default_datasets() -> Path:
    for parent in ROOT.parents:
        if (parent / "shared" / "datasets").is_dir():
            return parent / "shared" / "datasets"
    return ROOT.parent / "shared" / "datasets"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=default_datasets())
    parser.add_argument("--idle", type=Path, nargs="*", default=list(IDLE), help="nvidia-smi -q outputs of idle GPUs")
    parser.add_argument(
        "--without-reference-runs", action="store_true", help="leave out the reference runs' NVML readings"
    )
    parser.add_argument("--observations", type=Path, help="the lab's readings (CSV)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    try:
        idle = idle_readings(args.idle, ROOT)
    except (OSError, ValueError) as error:
        raise SystemExit(str(error)) from None
    extra = observations_csv(args.observations.read_text(encoding="utf-8")) if args.observations else []
    references = [] if args.without_reference_runs else reference_readings.readings()
    result = calibrate(gather(args.datasets, idle, extra, references=references))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result.result.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8")
    held = result.result.provenance["gpu_held_out"]
    print(
        f"wrote {args.out}: GPU idle {result.gpu.idle_fraction:.3f} TDP, slope {result.gpu.compute_slope:.3f}; "
        f"band +-{result.gpu_accuracy.band_fraction:.0%} (coverage {result.gpu_accuracy.coverage:.0%}); "
        f"cap exponent {result.cap.exponent:.2f}; held out: {held}"
    )


if __name__ == "__main__":
    main()
