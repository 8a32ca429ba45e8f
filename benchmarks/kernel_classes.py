"""Where an eager inference step's kernel time went, by class, against the performance model: what
benchmarks/infer_kernels.py recorded on a GPU, read back with the operator profiles' bytes.

    .venv/bin/python -m benchmarks.kernel_classes FILE.jsonl --part CATALOG_ID [--min-batch 128]

Per config at a batch of at least ``--min-batch`` (where the GPU, not the host, bounds the step): the
kernels' time split by name into the memory-bound ones (batch norms, elementwise kernels and copies,
layout transposes, reductions) and the rest (the matrix kernels), beside the model's memory and compute
time for the same step with the shipped parameters; and, for the batch norms and the elementwise
kernels, the profile's bytes of that class over their kernels' time in bytes per SM per clock of the
part's boost clock. The eager stream rate (app/perfmodel/stream.py) is one average over these classes;
run on both parts of a pair, this says which class bounds what.

The shipped H200 run: ``benchmarks/data/gpu_truth/h200-2026-11-26-infer-kernels.jsonl`` (and
``...-recheck.jsonl``) with ``--part h200-sxm-141gb``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.catalog import get
from app.contracts import Precision, Task
from app.perfmodel.device import device
from app.perfmodel.model import Case, steps
from app.perfmodel.params import shipped
from app.perfmodel.predict import profile_of

MEMORY_BOUND = re.compile(
    r"bn_|batch_norm|layer_norm|LayerNorm|elementwise|Memcpy|nchwToNhwc|nhwcToNchw|reduce_kernel|softmax|cat|copy|"
    r"index|fill"
)
"""Kernel names of the memory-bound work: what the model's memory time stands for in an eager step."""
CLASSES = {
    "norm": re.compile(r"bn_|batch_norm|layer_norm|LayerNorm"),
    "elementwise": re.compile(r"elementwise|Memcpy"),
}
"""Profile classes whose bytes map onto kernels by name."""


@dataclass(frozen=True, slots=True)
class Split:
    label: str
    kernels_ms: float
    memory_bound_ms: float
    model_memory_ms: float
    model_compute_ms: float
    rates: dict[str, float]
    """Per class in CLASSES: its profile bytes over its kernels' time, bytes per SM per clock."""


def split(row: dict[str, Any], part: str) -> Split | None:
    """One infer_kernels row read against the model on ``part``; None where nothing models it (or the
    part has no SMs and boost clock to read a rate per: a CPU)."""
    workload, batch = str(row["workload"]), int(row["batch"])
    precision = Precision(str(row["precision"]))
    profile = profile_of(workload, Task.infer, precision)
    dev = device(get(part), precision)
    if profile is None or dev is None or not dev.clock_hz:
        return None
    timed = [(str(name), float(us)) for name, _count, us in row["groups"]]

    def ms(pattern: re.Pattern[str], keep: Callable[[bool], bool] = bool) -> float:
        return sum(us for name, us in timed if keep(bool(pattern.search(name)))) / 1e3

    (modelled,) = steps([Case(profile, dev, batch, "torch-eager")], shipped().of("gpu"))
    rates = {}
    for name, pattern in CLASSES.items():
        moved = sum(b.bytes.per_sample * batch + b.bytes.per_step for b in profile.buckets if b.op_class.value == name)
        seconds = ms(pattern) / 1e3
        if moved and seconds:
            rates[name] = moved / seconds / (dev.units * dev.clock_hz)
    return Split(
        label=f"{workload} {precision.value} batch {batch}",
        kernels_ms=float(row["kernel_us"]) / 1e3,
        memory_bound_ms=ms(MEMORY_BOUND),
        model_memory_ms=modelled.memory_s * 1e3,
        model_compute_ms=modelled.compute_s * 1e3,
        rates=rates,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path, nargs="+", help="infer_kernels --out files (JSON lines)")
    parser.add_argument("--part", required=True, help="the catalog id of the GPU they ran on")
    parser.add_argument("--min-batch", type=int, default=128)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for path in args.runs for line in path.read_text(encoding="utf-8").splitlines() if line]
    header = f"{'kernels':>9}{'memory-bound':>14}{'model memory':>14}{'rest':>8}{'model compute':>15}"
    print(f"{'config':<30}{header}  B/SM/clock")
    for row in rows:
        if int(row["batch"]) < args.min_batch or (found := split(row, args.part)) is None:
            continue
        rates = ", ".join(f"{name} {rate:.1f}" for name, rate in found.rates.items())
        rest = found.kernels_ms - found.memory_bound_ms
        print(
            f"{found.label:<30}{found.kernels_ms:>9.1f}{found.memory_bound_ms:>14.1f}{found.model_memory_ms:>14.1f}"
            f"{rest:>8.1f}{found.model_compute_ms:>15.1f}  {rates}"
        )
    print("(ms per step; the model with the shipped parameters, stream rate included)")


if __name__ == "__main__":
    main()
