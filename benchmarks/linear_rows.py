"""What more threads buy a CPU's language-model products: a linear layer of few rows and the attention
over a KV cache, timed at one thread and at two, side by side in one run.

    .venv/bin/python -m benchmarks.linear_rows [--repeats 5] [--threads 2]

A decode step multiplies its weights by as many rows as sequences in the batch, and reads its KV cache
in attention. app/perfmodel/generation.py models how those scale with threads: an AMD CPU's fp32
products of up to ``generation.FEW_ROWS`` rows on one core whatever the threads (``one_thread_rows``:
MKL), and a calibrated part slower than the bandwidth (bf16's weights and KV cache on this project's VMs)
as the cores' work, which the threads share (``LlmCalibration.seconds``). This script is the evidence
on the machine it runs on: per config, the best of ``--repeats`` timings at one thread and at
``--threads``, their ratio (the speedup the threads give), process over wall time at ``--threads`` (that
many: all busy, whether or not they help) and the bytes of weights or cache read per second at one
thread. On a many-core machine, ``--threads 16`` or the core count says whether MKL splits a few-row
product over more than two cores, which this project's 2-vCPU VMs cannot.
On a shared machine single timings swing by tens of percent; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

SHAPES = ((8192, 2048), (5632, 2048), (2048, 2048), (512, 512))
"""Weight shapes (out x in): a 1B model's MLP and a square projection, larger than a VM's share of the
last-level cache, and a 1 MB weight that stays in a core's L2 (a product the memory cannot be bounding)."""
ROWS = (1, 2, 3, 4, 5, 6, 8, 16, 64)
ATTENTION = ((1, 1), (1, 9), (4, 9))
"""(batch, heads) of a decode's attention over 1,024 cached tokens of head size 64."""


def best_s(run: Callable[[], object], threads: int, repeats: int, calls: int = 20) -> tuple[float, float]:
    """The best mean seconds a call over ``repeats`` rounds of ``calls`` at ``threads``, and the process
    time over the wall time of all of them."""
    torch.set_num_threads(threads)
    for _ in range(3):
        run()
    best, wall, cpu = float("inf"), 0.0, 0.0
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(calls):
            run()
        spent = time.perf_counter() - t0
        wall, cpu = wall + spent, cpu + time.process_time() - c0
        best = min(best, spent / calls)
    return best, cpu / wall


def row(label: str, run: Callable[[], object], read_bytes: int, repeats: int, threads: int) -> None:
    one, _ = best_s(run, 1, repeats)
    two, busy = best_s(run, threads, repeats)
    print(
        f"| {label} | {one * 1e3:.2f} | {two * 1e3:.2f} | {one / two:.2f} | {busy:.2f} | {read_bytes / one / 1e9:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="the thread count compared with one")
    args = parser.parse_args()
    torch.manual_seed(0)
    n = args.threads
    print(f"| config | 1 thread ms | {n} threads ms | speedup | process / wall at {n} | GB/s read at 1 |")
    print("|---|---|---|---|---|---|")
    for dtype in (torch.float32, torch.bfloat16):
        name = "fp32" if dtype is torch.float32 else "bf16"
        for out_features, in_features in SHAPES:
            weight = torch.randn(out_features, in_features).to(dtype)
            size = weight.numel() * weight.element_size()
            for rows in ROWS:
                x = torch.randn(rows, in_features).to(dtype)
                label = f"{name} linear {out_features}x{in_features}, {rows} rows"
                row(label, partial(F.linear, x, weight), size, args.repeats, n)
        for batch, heads in ATTENTION:
            q = torch.randn(batch, heads, 1, 64).to(dtype)
            k, v = (torch.randn(batch, heads, 1024, 64).to(dtype) for _ in range(2))
            label = f"{name} attention, batch {batch}, {heads} heads, 1,024 cached"
            cache = 2 * k.numel() * k.element_size()
            row(label, partial(F.scaled_dot_product_attention, q, k, v), cache, args.repeats, n)


if __name__ == "__main__":
    main()
