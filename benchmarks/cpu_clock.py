"""This machine's core clock under load, measured: what a virtual machine's guest does not report.

    .venv/bin/python -m benchmarks.cpu_clock [--rounds 3]

A chain of dependent integer adds runs one add a cycle on every x86 core of the last decade (an add's
latency is one cycle, and each add waits for the one before). The script compiles such a chain (C,
inline assembly, with the system's C compiler), times 8 billion adds on one core, and prints the rate of
each round in GHz: the clock the core holds while busy, turbo included. A loop's own counting runs
beside the chain and cannot make it look faster, only slower. Each add takes its addend from a register
the compiler cannot know: Intel's Golden Cove cores and their successors (Sapphire, Emerald and Granite
Rapids) fold a chain of adds of a constant at rename, and that chain read 15.3 GHz on a 2-vCPU Xeon with
AMX (session 47). A rate no core holds (over ``MAX_GHZ``) is refused rather than printed as a clock.
benchmarks/llm_accuracy.py describes its machine at this clock (``CLOCK_GHZ``) where the run reports
none, as a VM's does not (its ``cpu MHz`` is the TSC's rate).
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
#define ADD __asm__ volatile("add %1, %0" : "+r"(x) : "r"(step));
int main(int argc, char **argv) {
    unsigned long x = 1;
    volatile unsigned long given = (unsigned long)argc;
    unsigned long step = given;
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

MAX_GHZ = 6.5
"""No x86 core holds more under load (the fastest desktop parts' single-core boost is 6.2 GHz)."""


def measure(rounds: int) -> list[float]:
    """The chain's rate (GHz) in each of ``rounds`` runs."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("no C compiler on this machine (cc or gcc): install one (Debian: apt-get install gcc)")
    with tempfile.TemporaryDirectory() as folder:
        source, binary = Path(folder) / "chain.c", Path(folder) / "chain"
        source.write_text(CHAIN, encoding="utf-8")
        subprocess.run([compiler, "-O1", str(source), "-o", str(binary)], check=True)
        rates = [
            float(subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout)
            for _ in range(rounds)
        ]
    if max(rates) > MAX_GHZ:
        raise SystemExit(
            f"the chain ran at {max(rates):.2f} GHz, faster than any core's clock: this core executes dependent "
            "adds more than one a cycle, so the chain does not measure its clock here; give the clock another "
            "way (the part's rated boost clock) to the scripts that take --clock-ghz"
        )
    return rates


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
