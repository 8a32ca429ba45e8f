"""This machine's core clock under load, measured: what a virtual machine's guest does not report.

    .venv/bin/python -m benchmarks.cpu_clock [--rounds 3]

A chain of dependent integer adds runs one add a cycle on every x86 core of the last decade (an add's
latency is one cycle, and each add waits for the one before). The script compiles such a chain (C,
inline assembly, with the system's C compiler), times 8 billion adds on one core, and prints the rate of
each round in GHz: the clock the core holds while busy, turbo included. A loop's own counting runs
beside the chain and cannot make it look faster, only slower. benchmarks/llm_accuracy.py describes
its machine at this clock (``CLOCK_GHZ``) where the run reports none, as a VM's does not (its
``cpu MHz`` is the TSC's rate).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

CHAIN = r"""
#include <stdio.h>
#include <time.h>
#define ADD __asm__ volatile("add $1, %0" : "+r"(x));
int main(void) {
    unsigned long x = 1;
    const long n = 2000000000L;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) { ADD ADD ADD ADD }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%.4f\n", 4.0 * (double)n / s / 1e9 + 0.0 * (double)x);
    return 0;
}
"""
"""Four dependent adds an iteration, 2 billion iterations: one add a cycle, whatever else the core does."""


def measure(rounds: int) -> list[float]:
    """The chain's rate (GHz) in each of ``rounds`` runs."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("no C compiler on this machine (cc or gcc): install one (Debian: apt-get install gcc)")
    with tempfile.TemporaryDirectory() as folder:
        source, binary = Path(folder) / "chain.c", Path(folder) / "chain"
        source.write_text(CHAIN, encoding="utf-8")
        subprocess.run([compiler, "-O1", str(source), "-o", str(binary)], check=True)
        return [
            float(subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout)
            for _ in range(rounds)
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rates = measure(args.rounds)
    print(
        f"one core, dependent adds: {', '.join(f'{r:.2f}' for r in rates)} GHz (median {statistics.median(rates):.2f})"
    )


if __name__ == "__main__":
    main()
