"""The performance model's own cost: this tree against an earlier revision, side by side in one run.

    .venv/bin/python -m benchmarks.model_speed [--against 1eefe1e] [--rounds 2] [--datasets DIR]

Checks the earlier revision out into a temporary git worktree and runs, in each tree alternately
(``rounds`` times, this project's .venv for both):
1. ``scripts/calibrate_perfmodel.py --out DIR``: the whole shipped calibration (both device kinds, the
   lab level, every leave-one-out band);
2. ``python -m benchmarks.accuracy --datasets DIR``: every accuracy test, each refitting the model.
Prints each one's median wall time in both trees and their ratio, and whether the two trees made the
same params.json and the same accuracy report: a speed-up that changed a figure is not one.

The default revision is the last before session 37's change to the fit (``calibrate._descend`` takes
the stack factors' Jacobian columns in closed form, and ``model.evaluate`` the cases' fusion once and
the seconds alone). Session 35's change to ``model.evaluate`` (each bucket's efficiency looked up by
index, not by name) and to ``runtime_pairs.modelled_ratios`` (the cases stacked once for the whole grid
of factors) was measured with ``--against 8bcd648``; session 43's (a traffic factor's Jacobian column
from its group's rows alone, ``calibrate._rows``) with ``--against aa1b070``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(tree: Path, command: list[str]) -> tuple[float, str]:
    """Wall seconds and standard output of ``command`` run with this project's Python in ``tree``."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *command],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {tree}: {done.stderr[-2000:]}")
    return took, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default="1eefe1e", help="the earlier revision (a commit or tag)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        earlier = Path(tmp) / "earlier"
        add = ["git", "worktree", "add", "--quiet", "--detach", str(earlier), args.against]
        subprocess.run(add, cwd=ROOT, check=True)
        try:
            trees = {"this tree": ROOT, args.against: earlier}
            jobs = {
                "calibration": lambda out: ["scripts/calibrate_perfmodel.py", "--out", out],
                "accuracy": lambda _out: ["-m", "benchmarks.accuracy", "--datasets", str(args.datasets.resolve())],
            }
            times: dict[tuple[str, str], list[float]] = {}
            outputs: dict[tuple[str, str], str] = {}
            for _ in range(args.rounds):
                for job, command in jobs.items():
                    for name, tree in trees.items():
                        out = Path(tmp) / f"{job}-{name.replace(' ', '-')}"
                        out.mkdir(exist_ok=True)
                        took, printed = timed(tree, command(str(out)))
                        times.setdefault((job, name), []).append(took)
                        made = out / "params.json"
                        outputs[job, name] = made.read_text() if made.is_file() else printed
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(earlier)], cwd=ROOT, check=True)
    for job in jobs:
        now, before = (statistics.median(times[job, name]) for name in trees)
        same = outputs[job, "this tree"] == outputs[job, args.against]
        print(
            f"{job}: this tree {now:.1f} s, {args.against} {before:.1f} s, {before / now:.2f}x "
            f"(median of {args.rounds}); output {'the same' if same else 'DIFFERENT'}"
        )


if __name__ == "__main__":
    main()
