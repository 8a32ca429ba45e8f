"""LiteRT conversions: every form of a model in one child (from one Keras export) against one child per
form, side by side in one run.

    .venv/bin/python -m benchmarks.litert_convert [--workload mobilenet_v2] [--size tiny] [--rounds 1]

Runs ``python -m app.bench.litert_export`` in each way alternately (``rounds`` times), in a fresh
folder each time: one child given every form (fp32, fp16, int8, int8-static), as a suite's LiteRT
configs of one model now convert (``LiteRt.ahead``); then one child per form, as each config's
``prepare`` converted on its own before. Prints each way's median wall time, their ratio, and whether
the two made files of the same sizes (give or take the converter's metadata).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.bench.litert_export import FORMATS

ROOT = Path(__file__).resolve().parents[1]


def converted(workload: str, size: str, forms: list[str], folder: Path) -> float:
    """Wall seconds of one conversion child making ``forms`` into ``folder``."""
    start = time.perf_counter()
    outputs = [f"{form}={folder / form}.tflite" for form in forms]
    command = [sys.executable, "-m", "app.bench.litert_export", workload, size, "2", *outputs]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="mobilenet_v2")
    parser.add_argument("--size", default="tiny", choices=("tiny", "standard"))
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    together: list[float] = []
    apart: list[float] = []
    sizes: dict[str, list[int]] = {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as each:
            together.append(converted(args.workload, args.size, list(FORMATS), Path(one)))
            apart.append(sum(converted(args.workload, args.size, [form], Path(each)) for form in FORMATS))
            sizes = {
                form: [(Path(folder) / f"{form}.tflite").stat().st_size for folder in (one, each)] for form in FORMATS
            }
    print(f"{args.workload} ({args.size}), {len(FORMATS)} forms, {args.rounds} round(s), median wall seconds:")
    print(f"  one child, every form: {statistics.median(together):6.1f}")
    print(f"  a child per form:      {statistics.median(apart):6.1f}")
    print(f"  ratio: {statistics.median(apart) / statistics.median(together):.2f}x")
    for form, (a, b) in sizes.items():
        print(f"  {form}: {a:,} bytes (one child) and {b:,} (a child per form)")


if __name__ == "__main__":
    main()
