"""What spinning OpenMP waiters cost a step beside another busy process: why scripts/test's shared pass
makes idle threads sleep.

    .venv/bin/python -m benchmarks.spin_wait [--rounds 2]

The test suite's shared pass runs two pytest workers on the cores; each runs PyTorch on its threads.
This script runs a tiny ResNet-56 training step (the bench harness's config, two threads, two timed
steps after one warm-up, as tests/bench/test_runtimes.py does) in a child process, beside a second
child that keeps two threads busy with small matrix products, once with OpenMP's default wait policy
and once with ``OMP_WAIT_POLICY=PASSIVE`` in both children, alternating, and prints each config's
wall time under each policy and their ratio. Side by side in one run: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

PRECISIONS = ("fp32", "bf16", "fp16")

STEP = """
import sys, time
from app.bench.config import BenchConfig
from app.bench.runner import run_config
from app.contracts import MeasureSpec, Precision, Task
from app.probes import probe_machine
machine = probe_machine()
tiny = MeasureSpec(fixed_iterations=2, warmup_min=1, warmup_budget_s=0.0)
config = BenchConfig("resnet56", Task.train, "torch-eager", "cpu", Precision(sys.argv[1]), 2, 2)
started = time.perf_counter()
result = run_config(config, machine, tiny, size="tiny")
print(result.status.value, time.perf_counter() - started)
"""

BUSY = """
import time, torch
torch.set_num_threads(2)
a = torch.randn(64, 64)
while True:
    for _ in range(100):
        a = torch.tanh(a @ a)
"""


def timed(precision: str, policy: str | None) -> float | None:
    """Seconds of one config's run beside the busy child, both under ``policy`` (None: OpenMP's default);
    None where this CPU refuses the precision."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    busy = subprocess.Popen([sys.executable, "-c", BUSY], env=env)
    try:
        time.sleep(2)  # the busy child's threads are working before the step starts
        done = subprocess.run(
            [sys.executable, "-c", STEP, precision], env=env, capture_output=True, text=True, check=True
        )
    finally:
        busy.kill()
        busy.wait()
    status, seconds = done.stdout.split()[-2:]
    return float(seconds) if status == "ok" else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print("| resnet56/train, 2 threads, beside a busy process | default s | PASSIVE s | default / PASSIVE |")
    print("|---|---|---|---|")
    for precision in PRECISIONS:
        runs = [(timed(precision, None), timed(precision, "PASSIVE")) for _ in range(args.rounds)]
        default = [d for d, _ in runs if d is not None]
        passive = [p for _, p in runs if p is not None]
        if len(default) < args.rounds or len(passive) < args.rounds:
            print(f"| {precision} | refused by this CPU | | |")
            continue
        d, p = statistics.median(default), statistics.median(passive)
        print(f"| {precision} | {d:.2f} | {p:.2f} | {d / p:.1f}x |")


if __name__ == "__main__":
    main()
