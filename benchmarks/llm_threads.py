"""A language model's CPU steps at more threads than the calibration measured, predicted and measured.

    .venv/bin/python -m app bench --suite benchmarks/llm_cpu_threads.toml --out benchmarks/data/llm_threads_run.json
    .venv/bin/python -m benchmarks.llm_threads [--run FILE] [--markdown]

The shipped CPU calibration of app/perfmodel/generation.py was measured at one thread
(benchmarks/llm_cpu.toml). This run measures decode and prefill at one and at two threads on the same
kind of machine, described as benchmarks/llm_accuracy.py describes it (rule peaks, measured bandwidth),
and each step is predicted with the shipped calibration twice: as the model gives it, and without the
few-thread rules, the two ways MKL's grid of threads shapes an AMD CPU's fp32 products, switched off
here for the second prediction: its few-row products run on as few threads as MKL splits them over
(``generation.product_threads``: at two threads, up to 4 rows on one), and their weights' work is shared
only by the threads that split the columns (``generation.weight_threads``: at two threads, one). The
BLAS share, ``device.blas_share``, stays, as the calibration was fitted with it. Per thread count: the
mean absolute log error of each (and the model's signed mean, model over measured). Nothing here is fitted.

``--run`` also takes another machine's run of benchmarks/llm_cpu.toml or of this suite, described by
``--clock-ghz`` (``benchmarks.cpu_clock``) and ``--flop-per-cycle``: the calibration carried to a machine
it never saw (docs/ACCURACY.md, session 46: a Zen 3 VM).
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from pathlib import Path
from unittest import mock

from app.catalog import CatalogHardware
from app.contracts import Result, RunReport
from app.perfmodel import generation
from benchmarks.llm_accuracy import ROOT, TASKS, described, fastest, header, machine_options, result_step

RUN = ROOT / "benchmarks" / "data" / "llm_threads_run.json"
"""The shipped run: this project's Zen 5 VM (2 vCPUs), 2026-11-29."""


def predicted_s(result: Result, part: CatalogHardware) -> float:
    """The shipped calibration's step for ``result``'s config on ``part``, at the threads it ran with."""
    step = result_step(result, part, threads=result.threads)
    assert step is not None
    return step.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--run", type=Path, default=RUN, help=f"a run of benchmarks/llm_cpu_threads.toml (default: {RUN})"
    )
    machine_options(parser)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    report = RunReport.model_validate_json(args.run.read_text(encoding="utf-8"))
    results, _spread = fastest([report])
    _clock, part = described(report, results, args)
    print(
        f"{part.name}, vendor {part.vendor}: bandwidth {part.memory_bandwidth_gb_s:.1f} GB/s measured at one "
        f"thread; the shipped calibration ({', '.join(generation.shipped().measured_on[:1])})"
    )
    bar = "|" if args.markdown else " "
    header(
        args.markdown, "preset", "task", "prec", "batch", "threads", "measured ms", "model ms", "without the rules ms"
    )
    errors: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    steps = [r for r in results if r.task in TASKS and r.latency_p50_ms is not None]
    for r in sorted(
        steps,
        key=lambda r: (r.workload, r.task.value if r.task else "", r.precision.value, r.batch_size, r.threads or 0),
    ):
        assert r.task is not None and r.latency_p50_ms is not None
        measured = r.latency_p50_ms / 1000
        model = predicted_s(r, part)
        with (
            mock.patch.object(generation, "product_threads", lambda *step: step[-1]),
            mock.patch.object(generation, "weight_threads", lambda *step: step[-1]),
        ):
            without = predicted_s(r, part)
        threads = r.threads or 0
        errors[threads]["model"].append(math.log(model / measured))
        errors[threads]["without"].append(math.log(without / measured))
        print(
            f"{bar} {r.workload} {bar} {r.task.value} {bar} {r.precision.value} {bar} {r.batch_size} {bar} "
            f"{threads} {bar} {measured * 1000:,.1f} {bar} {model * 1000:,.1f} {bar} {without * 1000:,.1f} {bar}"
        )
    print()
    for threads, found in sorted(errors.items()):
        model, without = (statistics.fmean(abs(e) for e in found[k]) for k in ("model", "without"))
        print(
            f"{threads} thread(s), {len(found['model'])} steps: mean abs log error {model:.2f}, mean log error "
            f"{statistics.fmean(found['model']):+.2f} (without the few-thread rules {without:.2f})"
        )


if __name__ == "__main__":
    main()
