"""How well a stack factor measured on other devices tells one device's figure from its own baseline:
leave one CPU out, on OpenVINO's published CPU benchmark (2024.1; ResNet-50 and BERT-base).

    .venv/bin/python -m benchmarks.stack_accuracy [--dataset PATH]

The stacked estimator (app/recommender/estimators/stacked.py) tells a runtime and precision a lab
device never ran from its own fp32 eager measurement times the factor the lab's other devices of its
kind measured side by side (app/perfmodel/stacks.py). The lab has too few devices to test that on, so
this runs the same function on published data with the same shape: each CPU's int8 (and bf16) throughput
from its own fp32 throughput times the factor of the other CPUs (the baseline is OpenVINO fp32 here,
eager PyTorch fp32 in the lab). Naive baselines beside it: the device's fp32 figure unchanged (factor
1), and the published int8/fp32 rule of thumb of 2x (``--naive-factor``).

Columns: median / mean / worst absolute error of each way, in percent of the published figure
(errors taken in log space, so 100% is a factor of 2 either way). Median and mean for the baselines.

Facts and figures from OpenVINO's documentation (openvinotoolkit/openvino, OV-benchmark-data.csv,
OV-2024.1; ../shared/datasets/openvino-benchmark/SOURCES.md); CPU-only rows.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

from app.contracts import Precision
from app.perfmodel.stacks import Measurement, stack_factors, without

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT.parent / "shared" / "datasets" / "openvino-benchmark" / "OV-benchmark-data.EXCERPT.csv"
CPU_TYPES = {"atom", "core", "xeon"}
COLUMNS = {Precision.fp32: "Throughput-FP32", Precision.int8: "Throughput-INT8", Precision.bf16: "Throughput_BF16"}
BASELINE = ("openvino", Precision.fp32)


def read(path: Path) -> dict[str, list[Measurement]]:
    """CPU-only rows per network, as measurements of the runtime 'openvino' in each precision."""
    found: dict[str, list[Measurement]] = defaultdict(list)
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["IE-Type"].strip() not in CPU_TYPES:
                continue
            for precision, column in COLUMNS.items():
                value = (row.get(column) or "").strip()
                if value:
                    platform = row["Platform name"].strip()
                    found[row["Network model"]].append(
                        Measurement(platform, "cpu", "openvino", precision, 1, None, float(value))
                    )
    return found


def errors(measured: list[Measurement], precision: Precision, naive_factor: float) -> list[tuple[float, float, float]]:
    """(stack factor's, factor 1's, naive factor's) log errors for each CPU that has both figures."""
    base = {m.device: m.throughput for m in measured if m.precision is Precision.fp32}
    out = []
    for m in measured:
        if m.precision is not precision or m.device not in base:
            continue
        factor = stack_factors(without(measured, m.device), BASELINE).get(("openvino", precision, "cpu"))
        if factor is None:
            continue
        truth = math.log(m.throughput)
        guess = math.log(base[m.device] * factor.factor)
        out.append((guess - truth, math.log(base[m.device]) - truth, math.log(base[m.device] * naive_factor) - truth))
    return out


def pct(log_error: float) -> float:
    return (math.exp(abs(log_error)) - 1) * 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--naive-factor", type=float, default=2.0, help="the rule of thumb for int8 over fp32")
    args = parser.parse_args()
    if not args.dataset.is_file():
        raise SystemExit(f"no {args.dataset}: give --dataset the OpenVINO benchmark CSV (see its SOURCES.md)")
    print("# Leave one CPU out: a precision's throughput = the CPU's own fp32 x the other CPUs' factor")
    print("| network | precision | CPUs | stack factor: median / mean / 90th pct / worst abs error | fp32 unchanged | "
          f"x{args.naive_factor:g} |")  # fmt: skip
    print("|---|---|---:|---|---|---|")
    for network, measured in sorted(read(args.dataset).items()):
        for precision in (Precision.int8, Precision.bf16):
            found = errors(measured, precision, args.naive_factor)
            if len(found) < 3:
                continue
            stack, unchanged, naive = ([pct(e[i]) for e in found] for i in range(3))
            print(
                f"| {network} | {precision.value} | {len(found)} | {statistics.median(stack):.0f}% / "
                f"{statistics.mean(stack):.0f}% / {sorted(stack)[int(0.9 * len(stack))]:.0f}% / {max(stack):.0f}% | "
                f"{statistics.median(unchanged):.0f}% / "
                f"{statistics.mean(unchanged):.0f}% | {statistics.median(naive):.0f}% / {statistics.mean(naive):.0f}% |"
            )


if __name__ == "__main__":
    main()
