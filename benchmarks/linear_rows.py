"""What more threads buy a CPU's language-model products: a linear layer of few rows and the attention
over a KV cache, timed at one thread and at two, side by side in one run.

    .venv/bin/python -m benchmarks.linear_rows [--repeats 5] [--threads 2]
    .venv/bin/python -m benchmarks.linear_rows --split [--write]
    .venv/bin/python -m benchmarks.linear_rows --gradients
    .venv/bin/python -m benchmarks.linear_rows --groups
    .venv/bin/python -m benchmarks.linear_rows --passes [--write | --threads 2]

A decode step multiplies its weights by as many rows as sequences in the batch, and reads its KV cache
in attention. app/perfmodel/generation.py models how those scale with threads: an AMD CPU's fp32
products of few rows on as many threads as MKL splits them over (``product_threads``: one row on one,
2-4 rows on one of two), and a calibrated part slower than the bandwidth (bf16's weights and KV cache
on this project's VMs) as the cores' work, which the threads share (``LlmCalibration.seconds``). This
script is the evidence on the machine it runs on: per config, the best of ``--repeats`` timings at one
thread and at ``--threads``, their ratio (the speedup the threads give), process over wall time at
``--threads`` (that many: all busy, whether or not they help) and the bytes of weights or cache read per
second at one thread. On a many-core machine, ``--threads 16`` or the core count says how fast the
threads MKL gives a few-row product (``--split``) run it, which this project's 2-vCPU VMs cannot.
On a shared machine single timings swing by tens of percent; the ratios are what to read.

``--split`` answers that on any machine, however few its cores: how many threads MKL hands a share of
an fp32 product of few rows when it is allowed N (1 to 256, more threads than cores: the count is MKL's
choice, not the machine's). Its idle threads sleep (``OMP_WAIT_POLICY=PASSIVE``, which the script sets
for itself), so a thread with a share of the CPU time did a share of the product
(/proc/self/task/*/schedstat, Linux). Per N it prints MKL's grid (``app/perfmodel/mkl_split.py``: the
output columns split over C threads, the rows in blocks of 4 over G) and checks the grid's count against
the measured one at 1, 3, 5, 9, 17 and 33 rows; ``--write`` ships the grid
(app/perfmodel/data/mkl_split.json). About four minutes.

``--gradients`` counts the same way a training step's three products of a layer at 1-16 rows, 2-96
threads allowed: the forward, the input gradient and the weight gradient (app/perfmodel/model.py
``few_row_shares``), each against the count the model gives it. Under a minute.

``--groups`` asks the same way whether each group of rows on MKL's grid takes the whole weight matrix
(generation.py's ``weight_threads``): an fp32 product's process time over all its threads at 2-64
allowed, against its time at one thread, a part per call plus a part per row; the groups' extra time
is the per-call part again per group. About half a minute.

``--passes`` asks how many times one thread's fp32 product of 1-16 rows reads its weights: per weight
shape, the time at each row count over the time at one row, which streams the weights once (MKL's
matrix-vector path). A ratio that grows as the rows says each row took a pass over the weights; one that
stops growing says the product took the matrix path, whose per-call part (``--groups``'s) is the weights
packed once per call. On session 57's Zen 3 VM (AVX2, no AVX-512) a 67 MB weight took 2.1, 2.9 and 3.4
times one row's time at 2-4 rows and 3.6-5.1 from 5 to 16 (docs/ACCURACY.md). About a minute.
``--threads 2`` times the products on two threads instead (MKL splits their columns; the passes stay).
``--write`` then times a 67 MB weight at each of 1-16 rows and at 16-256 and ships the passes of this
CPU's BLAS path (app/perfmodel/weight_passes.py: the few-row kernel's, to the row before the matrix
kernel takes over, and the matrix kernel's fixed part per call), where the matrix kernel's first count
shows as a drop in time; on session 59's Intel VM, 1-3 rows one pass, 4-6 two, ..., 13-15 five, and from
16 rows 2.3; on session 60's Zen 4 VM (MKL's AMD code), 1, 2 and 3 passes at 1-3 rows and from 4 rows
1.74 (docs/ACCURACY.md). About a minute more.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F

from app.catalog import CatalogHardware
from app.catalog.probed import vector_isa
from app.contracts import Precision
from app.perfmodel import mkl_split, weight_passes
from app.perfmodel.generation import catalog_vendor
from benchmarks.lab_cpu import cpu_flags, cpu_identity

SHAPES = ((8192, 2048), (5632, 2048), (2048, 2048), (512, 512))
"""Weight shapes (out x in): a 1B model's MLP and a square projection, larger than a VM's share of the
last-level cache, and a 1 MB weight that stays in a core's L2 (a product the memory cannot be bounding)."""
ROWS = (1, 2, 3, 4, 5, 6, 8, 16, 64)
ATTENTION = ((1, 1), (1, 9), (4, 9))
"""(batch, heads) of a decode's attention over 1,024 cached tokens of head size 64."""


SPLIT_CAPS = (*range(1, 33), 36, 40, 48, 56, 64, 72, 80, 84, 96, 112, 128, 144, 160, 192, 224, 256)
"""The thread counts ``--split`` measures: every count to 32, then every core count of the catalog's CPUs
(a count between two measured ones takes the lower one's grid)."""
SPLIT_WEIGHT = (32000, 2048)
"""A 1B model's output projection (the grid was the same for 2048x5632 and 8192x2048 weights): large, so
that a thread's share of the work stands well above what waking an idle one costs, at 256 threads too."""
CHECKED_ROWS = (1, 3, 5, 9, 17, 33)
PASSES_ROWS = (1, 2, 3, 4, 5, 6, 8, 12, 16)


def cpu_ns() -> dict[str, int]:
    """Each of this process's threads' time on a CPU so far (ns); a thread that ends while it is read (the
    pool shrinks when fewer threads are allowed) is left out."""
    spent = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
                spent[tid] = int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return spent


def threads_working(run: Callable[[], object], threads: int, calls: int = 4) -> int:
    """How many of ``threads`` threads did a share of ``run``: those with at least a fifth of the CPU time
    of the second busiest over ``calls`` calls (the busiest is the caller's, which runs Python too) and a
    twentieth of the busiest's (one row: the caller's alone). An idle thread woken for each call spends a
    few microseconds."""
    torch.set_num_threads(threads)
    for _ in range(3):
        run()
    before = cpu_ns()
    for _ in range(calls):
        run()
    spent = [ns - before.get(tid, 0) for tid, ns in cpu_ns().items()]
    second = sorted(spent)[-2] if len(spent) > 1 else spent[0]
    return sum(1 for ns in spent if ns >= max(0.2 * second, 0.05 * max(spent)))


def working_threads(rows: int, threads: int, weight: torch.Tensor, calls: int = 4) -> int:
    """How many of ``threads`` threads did a share of an fp32 linear layer of ``rows`` rows."""
    x = torch.randn(rows, weight.shape[1])
    return threads_working(partial(F.linear, x, weight), threads, calls)


GRADIENT_CAPS = (2, 8, 16, 96)
GRADIENT_ROWS = (1, 2, 4, 5, 8, 16)


def gradients() -> None:
    """A training step's products of a linear layer at a batch of ``rows``: the forward (x W^T), the input
    gradient (g W: the batch's rows) and the weight gradient (g^T x: the layer's outputs as rows, the
    batch as the inner dimension), the threads each takes, against what app/perfmodel/model.py's
    ``_fewer_threads`` says: the forward's and the input gradient's, MKL's grid; the weight gradient's,
    every thread but one at one row."""
    torch.manual_seed(0)
    weight = torch.randn(*SPLIT_WEIGHT)
    print("| threads allowed | rows | forward: model, counted | input gradient | weight gradient |")
    print("|---|---|---|---|---|")
    misses = 0
    for threads in GRADIENT_CAPS:
        for rows in GRADIENT_ROWS:
            x, g = torch.randn(rows, weight.shape[1]), torch.randn(rows, weight.shape[0])
            grid = mkl_split.product_threads(rows, threads)
            said = (grid, grid, 1 if rows == 1 else threads)
            seen = (
                threads_working(partial(F.linear, x, weight), threads),
                threads_working(partial(torch.mm, g, weight), threads),
                threads_working(partial(torch.mm, g.t(), x), threads),
            )
            misses += sum(a != b for a, b in zip(said, seen, strict=True))
            cells = [f"{a}, {b}" + ("" if a == b else " *") for a, b in zip(said, seen, strict=True)]
            print(f"| {threads} | {rows} | {' | '.join(cells)} |", flush=True)
    print(f"\n{misses} of {3 * len(GRADIENT_CAPS) * len(GRADIENT_ROWS)} counts off the model's (*)")


GROUPS_CAPS = (2, 4, 8, 16, 32, 64)
GROUPS_ROWS = (16, 64, 256)
GROUPS_WEIGHT = (8192, 2048)
"""A 1B model's MLP weight (67 MB fp32): its fixed part per call, about 5 ms at one thread on the lab's
VMs, stands well above what waking a thread costs."""


def cpu_s(run: Callable[[], object], threads: int, repeats: int, calls: int = 5) -> float:
    """The least process time (all threads') a call of ``run`` took at ``threads``, over ``repeats`` rounds."""
    torch.set_num_threads(threads)
    for _ in range(3):
        run()
    best = float("inf")
    for _ in range(repeats):
        c0 = time.process_time()
        for _ in range(calls):
            run()
        best = min(best, (time.process_time() - c0) / calls)
    return best


def groups(repeats: int) -> None:
    """Whether each group of rows of MKL's grid takes the whole weight matrix: an fp32 product's process
    time at 2-64 threads allowed, over its time at one thread, beside what that gives. At one thread the
    time is a part per call, ``a`` (the weights'), and a part per row, ``b`` (least squares over
    GROUPS_ROWS); on the grid, G groups of rows (``mkl_split.product_threads`` over
    ``mkl_split.column_threads``) would take G x a + b x rows if each took the whole matrix
    (app/perfmodel/generation.py ``weight_threads``), and a + b x rows if they shared it."""
    torch.manual_seed(0)
    weight = torch.randn(*GROUPS_WEIGHT)
    inputs = {rows: torch.randn(rows, weight.shape[1]) for rows in GROUPS_ROWS}
    one = {rows: cpu_s(partial(F.linear, x, weight), 1, repeats) for rows, x in inputs.items()}
    per_row, per_call = statistics.linear_regression(GROUPS_ROWS, [one[rows] for rows in GROUPS_ROWS])
    print(f"one thread: {per_call * 1e3:.2f} ms a call (the weights') + {per_row * 1e6:.1f} us a row")
    print(
        "| threads allowed | rows | columns x groups | process time / one thread's | each group the matrix | shared |"
    )
    print("|---|---|---|---|---|---|")
    whole, shared = [], []
    for threads in GROUPS_CAPS:
        for rows, x in inputs.items():
            columns = mkl_split.column_threads(rows, threads)
            working = mkl_split.product_threads(rows, threads) // columns
            measured = cpu_s(partial(F.linear, x, weight), threads, repeats) / one[rows]
            said = (working * per_call + per_row * rows) / one[rows]
            flat = (per_call + per_row * rows) / one[rows]
            whole.append(abs(math.log(said / measured)))
            shared.append(abs(math.log(flat / measured)))
            print(
                f"| {threads} | {rows} | {columns} x {working} | {measured:.2f} | {said:.2f} | {flat:.2f} |", flush=True
            )
    print(
        f"\nmean abs log error over {len(whole)}: each group the whole matrix {statistics.fmean(whole):.2f}, "
        f"the groups sharing it {statistics.fmean(shared):.2f}"
    )


def passes(repeats: int, write: bool, threads: int = 1) -> None:
    """Per weight shape (SHAPES), the fp32 product on ``threads`` at each of PASSES_ROWS over its time at one
    row, and the bandwidth the one-row product read its weights at (see the module docstring); with
    ``write``, the machine's BLAS path's passes at one thread (``path_passes``) shipped in
    app/perfmodel/data/weight_passes.json."""
    if write and threads != 1:
        raise SystemExit("--passes --write measures one thread: leave --threads out")
    torch.manual_seed(0)
    print("| weights (out x in) | MB | one row GB/s | " + " | ".join(f"{rows} rows" for rows in PASSES_ROWS) + " |")
    print("|---|---|---|" + "---|" * len(PASSES_ROWS))
    for out_features, in_features in SHAPES:
        weight = torch.randn(out_features, in_features)
        size = weight.numel() * weight.element_size()
        times = [
            best_s(partial(F.linear, torch.randn(rows, in_features), weight), threads, repeats)[0]
            for rows in PASSES_ROWS
        ]
        ratios = " | ".join(f"{t / times[0]:.2f}" for t in times)
        print(
            f"| {out_features}x{in_features} | {size / 1e6:.0f} | {size / times[0] / 1e9:.1f} | {ratios} |", flush=True
        )
    if write:
        write_passes(repeats)


FEW_ROWS = range(1, 17)
MATRIX_ROWS = (16, 32, 64, 128, 256)
PASSES_WEIGHT = (8192, 2048)
"""A 1B model's MLP weight (67 MB fp32), larger than a VM's share of the last-level cache."""
MATRIX_DROP = 0.85
"""A row more taking less than this share of the time of the rows before it: MKL's matrix kernel took over."""


def path_passes(few: list[float], matrix: list[float]) -> tuple[list[float], float] | None:
    """From one thread's times at 1-16 rows (``few``) and at MATRIX_ROWS (``matrix``): the passes of the
    few-row kernel at each count before the first that drops below MATRIX_DROP of the one before (the
    matrix kernel's first), each time over one row's to the nearest whole pass; and the matrix kernel's
    fixed part per call (least squares over MATRIX_ROWS: time = fixed + per row x rows) over one row's
    time. None where no count to 16 drops: the two kernels cannot be told apart."""
    first = next((i for i in range(1, len(few)) if few[i] < MATRIX_DROP * few[i - 1]), None)
    if first is None:
        return None
    _per_row, fixed = statistics.linear_regression(MATRIX_ROWS, matrix)
    return [float(max(1, round(t / few[0]))) for t in few[:first]], round(fixed / few[0], 2)


def write_passes(repeats: int) -> None:
    path = weight_passes.path_of(this_cpu(), Precision.fp32)
    if path is None:
        raise SystemExit("this CPU has no BLAS path the model knows (app/perfmodel/weight_passes.py path_of)")
    weight = torch.randn(*PASSES_WEIGHT)
    timed = {
        rows: best_s(partial(F.linear, torch.randn(rows, weight.shape[1]), weight), 1, repeats)[0]
        for rows in sorted({*FEW_ROWS, *MATRIX_ROWS})
    }
    found = path_passes([timed[rows] for rows in FEW_ROWS], [timed[rows] for rows in MATRIX_ROWS])
    print(f"\n{path}: " + ", ".join(f"{rows} rows {timed[rows] / timed[1]:.2f}" for rows in timed))
    if found is None:
        raise SystemExit(f"no row count to 16 ran faster than the one before: {path}'s passes not written")
    few_rows, matrix = found
    source = (
        f"benchmarks/linear_rows.py --passes --write: {platform.machine()}, {cpu_name()}, "
        f"torch {torch.__version__}, {time.strftime('%Y-%m-%d')}"
    )
    shipped = weight_passes.shipped()
    paths = {**shipped.paths, path: weight_passes.PathPasses(few_rows=few_rows, matrix=matrix, source=source)}
    written = weight_passes.WeightPasses(paths=dict(sorted(paths.items())))
    weight_passes.PATH.write_text(json.dumps(written.model_dump(), indent=1) + "\n", encoding="utf-8")
    print(f"{path}: few-row passes {few_rows}, the matrix kernel's {matrix}; wrote {weight_passes.PATH}")


def this_cpu() -> CatalogHardware:
    """This machine's CPU as the model's BLAS path needs it: its vendor and whether it has AVX-512."""
    info = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    vendor, _family, _model, name = cpu_identity(info)
    isa = vector_isa(cpu_flags(info))
    return CatalogHardware(id="this-machine", kind="cpu", vendor=catalog_vendor(vendor), name=name, isa=isa)


def grid(threads: int, weight: torch.Tensor) -> tuple[int, int]:
    """MKL's (columns, row groups) at ``threads``: two rows take one block of rows, so as many threads as
    the columns' split; 4k rows take k blocks, one group each, until k passes the groups (then blocks of
    8 rows halve the groups working)."""
    columns = working_threads(2, threads, weight)
    groups = 1
    while columns * (groups + 1) <= threads and working_threads(4 * (groups + 1), threads, weight) > columns * groups:
        groups += 1
    return columns, groups


def cpu_name() -> str:
    return cpu_identity(Path("/proc/cpuinfo").read_text(encoding="utf-8"))[3] or "an unnamed CPU"


def split(write: bool) -> None:
    torch.manual_seed(0)
    weight = torch.randn(*SPLIT_WEIGHT)
    columns, groups, misses = [], [], 0
    checked = " | ".join(f"{rows} rows: grid, measured" for rows in CHECKED_ROWS)
    print(f"| threads allowed | columns | row groups | {checked} |")
    print(f"|---|---|---|{'---|' * len(CHECKED_ROWS)}")
    for threads in SPLIT_CAPS:
        c, g = grid(threads, weight)
        columns.append(c)
        groups.append(g)
        cells = []
        for rows in CHECKED_ROWS:
            said, seen = mkl_split.threads_of(rows, c, g), working_threads(rows, threads, weight)
            misses += said != seen
            cells.append(f"{said}, {seen}" + ("" if said == seen else " *"))
        print(f"| {threads} | {c} | {g} | {' | '.join(cells)} |", flush=True)
    print(f"\n{misses} of {len(SPLIT_CAPS) * len(CHECKED_ROWS)} checked counts off the grid's (*)")
    if write:
        source = (
            f"benchmarks/linear_rows.py --split --write: {platform.machine()}, {cpu_name()}, "
            f"torch {torch.__version__}, {time.strftime('%Y-%m-%d')}"
        )
        found = mkl_split.MklSplit(source=source, threads=list(SPLIT_CAPS), columns=columns, row_groups=groups)
        lines = [f" {json.dumps(key)}: {json.dumps(value)}" for key, value in found.model_dump().items()]
        mkl_split.PATH.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
        print(f"wrote {mkl_split.PATH}")


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
    parser.add_argument(
        "--threads", type=int, help="the thread count compared with one (default 2); with --passes, the threads (1)"
    )
    parser.add_argument("--split", action="store_true", help="how many threads MKL splits a few-row product over")
    parser.add_argument(
        "--write", action="store_true", help="with --split: ship the grid measured; with --passes, the passes"
    )
    parser.add_argument(
        "--gradients", action="store_true", help="the threads of a training step's three products of a layer"
    )
    parser.add_argument(
        "--groups", action="store_true", help="whether each group of rows of MKL's grid takes the whole weights"
    )
    parser.add_argument("--passes", action="store_true", help="how many times one thread's few-row product reads")
    args = parser.parse_args()
    if args.passes:
        passes(args.repeats, args.write, args.threads or 1)
        return
    if args.split or args.gradients or args.groups:
        if os.environ.get("OMP_WAIT_POLICY") != "PASSIVE":  # idle threads must sleep to be told apart
            env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
            os.execve(sys.executable, [sys.executable, "-m", "benchmarks.linear_rows", *sys.argv[1:]], env)
        if args.split:
            split(args.write)
        elif args.groups:
            groups(args.repeats)
        else:
            gradients()
        return
    torch.manual_seed(0)
    n = args.threads or 2
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
