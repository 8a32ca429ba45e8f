"""The power fit's least-squares solves: the shipped NNLS against the one the power fit had before, side
by side on the same problems in one run.

    .venv/bin/python -m benchmarks.nnls_speed [--problems 3000] [--rounds 5]

The power calibration (scripts/calibrate_power.py) solves some 300,000 non-negative least-squares
problems of about 800 rows and 2-4 columns. The problems are recorded from a real fit (MLPerf Power's
rows, the idle reading and the reference runs' NVML readings, as the script fits them), then each
implementation solves all of them, alternately, ``rounds`` times; printed: each one's median time per
solve, their ratio, and the largest difference between their solutions (relative to the solution's
size), which must be rounding.

``row_space``, the previous implementation (Lawson and Hanson's active set, each step a least-squares
solve over every row), is kept here as the reference the shipped one (app/perfmodel/nnls.py, the same
method on the normal equations, in plain Python) is measured against.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.perfmodel import nnls as shipped
from app.perfmodel import power_fit, reference_readings
from app.perfmodel.power_calibration import gather
from benchmarks import power_check

ROOT = Path(__file__).resolve().parents[1]
Problem = tuple[np.ndarray, np.ndarray]


def row_space(a: np.ndarray, b: np.ndarray, iterations: int = 100) -> np.ndarray:
    """min ||a x - b|| subject to x >= 0 (Lawson and Hanson's active set method), as power_fit had it."""
    cols = a.shape[1]
    x = np.zeros(cols)
    passive = np.zeros(cols, dtype=bool)
    gradient = a.T @ b
    tolerance = 1e-10 * max(1.0, float(np.abs(a).max(initial=0.0))) * max(a.shape)
    for _ in range(iterations):
        free = np.where(~passive, gradient, -np.inf)
        if passive.all() or free.max() <= tolerance:
            break
        passive[int(np.argmax(free))] = True
        while True:
            z = np.zeros(cols)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > tolerance).all():
                x = z
                break
            bad = passive & (z <= tolerance)
            alpha = float(np.min(x[bad] / (x[bad] - z[bad])))
            x = x + alpha * (z - x)
            passive &= x > tolerance
            x[~passive] = 0.0
            if not passive.any():
                break
        gradient = a.T @ (b - a @ x)
    return x


def recorded(datasets: Path, count: int) -> list[Problem]:
    """The first ``count`` problems a full power fit solves."""
    problems: list[Problem] = []
    observations = gather(datasets, power_check.idle(), references=reference_readings.readings()).observations
    gpu = [o for o in observations if o.hardware.kind == "gpu"]

    def record(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if len(problems) < count:
            problems.append((a.copy(), b.copy()))
        return shipped.nnls(a, b)

    power_fit.nnls = record  # type: ignore[assignment]
    try:
        power_fit.fit(gpu)
    finally:
        power_fit.nnls = shipped.nnls
    return problems


def timed(solve: Callable[[np.ndarray, np.ndarray], np.ndarray], problems: list[Problem]) -> float:
    start = time.perf_counter()
    for a, b in problems:
        solve(a, b)
    return (time.perf_counter() - start) / len(problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--problems", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    problems = recorded(args.datasets, args.problems)
    gap = 0.0
    for a, b in problems:
        old, new = row_space(a, b), shipped.nnls(a, b)
        gap = max(gap, float(np.abs(old - new).max() / max(np.abs(old).max(), 1e-300)))
    times: dict[str, list[float]] = {"row space (before)": [], "normal equations (shipped)": []}
    for _ in range(args.rounds):
        times["row space (before)"].append(timed(row_space, problems))
        times["normal equations (shipped)"].append(timed(shipped.nnls, problems))
    before, now = (statistics.median(t) for t in times.values())
    rows, columns = problems[0][0].shape
    print(f"{len(problems)} problems of the power fit ({rows} rows, {columns} columns), {args.rounds} rounds")
    for name, found in times.items():
        print(f"{name}: median {statistics.median(found) * 1e6:.0f} us per solve")
    print(f"ratio before / shipped: {before / now:.1f}x; largest relative difference of the solutions {gap:.1e}")


if __name__ == "__main__":
    main()
