"""The performance model against hwadvisor's own GPU reference runs, which it was never fitted on.

    .venv/bin/python -m benchmarks.reference_check [--all]

For every settled model result of each shipped reference run (app/catalog/data/reference/: so far an
H200 measured in torch eager), the figure the recommender gives a lab that owns no GPU (the modelled
estimate, with its band) beside the measurement: the mean absolute log error and the mean signed
error, per task and precision, and how often the band holds the measurement. ``--all`` prints each
config. The model's parameters come from published results alone (scripts/calibrate_perfmodel.py);
the reference runs are evidence at recommendation time, never calibration data, so this is a
held-out check.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict

from app.catalog import load as catalog
from app.catalog import reference
from app.recommender.estimators.base import Config, Evidence
from app.recommender.estimators.modelled import Modelled
from app.recommender.evidence import LAB, catalog_hardware


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="print every config")
    args = parser.parse_args()
    parts = {e.id: e for e in catalog()}
    for run in reference.shipped():
        hardware = catalog_hardware(parts[run.hardware_id])
        groups: dict[str, list[tuple[float, bool]]] = defaultdict(list)
        print(f"{run.source}: {run.machine.device(run.device).name}, measured {run.captured}")  # type: ignore[union-attr]
        for entry in run.results:
            r = entry.result
            if not entry.settled or r.task is None or not r.throughput_samples_per_s or r.runtime != "torch-eager":
                continue
            if r.task.value not in ("infer", "train"):
                continue
            evidence = Evidence([], workload=r.workload, task=r.task)
            guess = Modelled.estimate(hardware, Config(r.runtime, r.precision, r.batch_size, None, LAB), evidence)
            if guess is None:
                continue
            error = math.log(guess.throughput_samples_per_s / r.throughput_samples_per_s)
            held = guess.throughput_low <= r.throughput_samples_per_s <= guess.throughput_high
            for key in (
                "all",
                f"{r.task.value} {r.precision.value}",
                f"{r.task.value} batch {'1' if r.batch_size == 1 else '>1'}",
            ):
                groups[key].append((error, held))
            if args.all:
                print(
                    f"  {r.workload:<14}{r.task.value:<6}{r.precision.value:<5}{r.batch_size:>5}  measured "
                    f"{r.throughput_samples_per_s:>10.1f}  model {guess.throughput_samples_per_s:>10.1f} "
                    f"(+-{guess.error_pct:.0f}%)  {math.exp(error):.2f}{'' if held else '  outside the band'}"
                )
        print(f"  {'group':<18}{'n':>4} {'mean |log err|':>15} {'mean signed':>12} {'band holds':>11}")
        for key in sorted(groups, key=lambda k: (k != "all", k)):
            values = groups[key]
            mean_abs = statistics.fmean(abs(e) for e, _ in values)
            signed = math.exp(statistics.fmean(e for e, _ in values)) - 1
            held = sum(h for _, h in values) / len(values)
            print(f"  {key:<18}{len(values):>4} {mean_abs:>15.2f} {signed:>+12.0%} {held:>11.0%}")


if __name__ == "__main__":
    main()
