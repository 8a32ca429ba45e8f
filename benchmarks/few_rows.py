"""What a second thread buys a zoo workload whose linear layers take one row per sample, measured and
modelled, with and without the few-row rule for the zoo's steps.

    .venv/bin/hwadvisor bench --suite benchmarks/cpu_few_rows.toml --out RUN.json   (or cpu_few_rows_train.toml)
    .venv/bin/python -m benchmarks.few_rows --run RUN.json [--markdown] [--batches]
    .venv/bin/python -m benchmarks.few_rows --speed [--rounds 9]

AlexNet's classifier (58 of its 61 million weights) and the FCN MLPs multiply one row per sample. In
eager PyTorch at fp32 on an AMD CPU those products are MKL's, which runs a product of 1-4 rows on one
thread when it may use two (app/perfmodel/mkl_split.py), so a second thread speeds such a step at a
small batch far less than the model's threads otherwise say. The model gives each step's linear
layers the threads MKL runs them on (app/perfmodel/model.py ``few_row_shares``; in training the
forward and input gradient take the batch's rows, the weight gradient the layer's outputs).

The run's speedups (two threads' samples/s over one thread's, same workload and batch) are set beside
the model's for the catalog parts of the run's CPU generation (benchmarks/lab_cpu.py ``candidates``,
their peaks bounded by the run's instruction set), as the model gives them and with the rule switched
off. A speedup is a ratio of two figures of one machine, so the CPU level the model's absolute figures
carry (a generation's miss, docs/ACCURACY.md) cancels. Nothing here is fitted.

``--batches`` reads the same run another way: per workload and thread count, each batch's samples/s over
batch 1's, measured and modelled (the median part), with the *weight passes* and without (on an Intel
CPU MKL's few-row kernel reads a linear layer's weights once per three rows, app/perfmodel/weight_passes.py:
an MLP's batch 4 runs at twice batch 1's samples/s, not four times; on an AMD CPU once per row to 3, so
batch 2 and 3 run at batch 1's). Also a ratio of one machine's figures.

``--speed`` times what the rule costs a recommendation's first answer: the model's figures for every
catalog CPU at nine batch sizes, ResNet-50, BERT-base and AlexNet in eager PyTorch at fp32 (15,930
predictions, every cache emptied first), with and without the rule, alternately, ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import defaultdict
from pathlib import Path
from unittest import mock

from app.catalog import CatalogHardware, load
from app.catalog.probed import as_probed
from app.contracts import Precision, Result, ResultStatus, RunReport, Task
from app.perfmodel import model
from app.perfmodel.predict import Ask, forget, prime
from benchmarks.lab_cpu import candidates, modelled
from benchmarks.llm_accuracy import header


def throughput(r: Result, part: CatalogHardware, threads: int) -> float:
    """The model's samples/s for ``r``'s config on ``part`` at ``threads`` (``lab_cpu.modelled``)."""
    found = modelled(r, part, threads)
    assert found is not None, f"no prediction for {r.workload} on {part.id}"
    return found


def speedup(r: Result, parts: list[CatalogHardware]) -> float:
    """The median part's two-thread over one-thread samples/s for ``r``'s config."""
    return statistics.median(throughput(r, p, 2) / throughput(r, p, 1) for p in parts)


def batch_ratio(r: Result, first: Result, parts: list[CatalogHardware]) -> float:
    """The median part's samples/s for ``r``'s config over ``first``'s (the same at batch 1)."""
    threads = r.threads or 1
    return statistics.median(throughput(r, p, threads) / throughput(first, p, threads) for p in parts)


def no_passes(_path: str | None, _rows: tuple[float, ...], _batch: float) -> dict[int, float]:
    return {}


def batches(report: RunReport, parts: list[CatalogHardware], markdown: bool) -> None:
    """Each batch's samples/s over batch 1's, measured and modelled, with the weight passes and without."""
    by: dict[tuple[str, str, int], dict[int, Result]] = defaultdict(dict)
    for r in report.results:
        if r.status is ResultStatus.ok and r.task and r.throughput_samples_per_s:
            by[(r.workload, r.task.value, r.threads or 1)][r.batch_size] = r
    bar = "|" if markdown else " "
    header(markdown, "workload", "task", "threads", "batch", "samples/s", "over batch 1", "model", "without passes")
    errors: dict[str, list[float]] = defaultdict(list)
    for (workload, task, threads), found in sorted(by.items()):
        first = found.get(1)
        if first is None or not first.throughput_samples_per_s:
            continue
        for batch, r in sorted(found.items()):
            if batch == 1 or not r.throughput_samples_per_s:
                continue
            measured = r.throughput_samples_per_s / first.throughput_samples_per_s
            predicted = batch_ratio(r, first, parts)
            forget()  # the predictions are cached: the next ones are made without the passes
            with mock.patch.object(model, "_passes", no_passes):
                without = batch_ratio(r, first, parts)
            forget()
            for name, figure in (("the model", predicted), ("without the passes", without)):
                errors[name].append(math.log(figure / measured))
            print(
                f"{bar} {workload} {bar} {task} {bar} {threads} {bar} {batch} {bar} {r.throughput_samples_per_s:,.1f} "
                f"{bar} {measured:.2f} {bar} {predicted:.2f} {bar} {without:.2f} {bar}"
            )
    print()
    for label, found_errors in sorted(errors.items()):
        print(
            f"{label}: the ratio's mean abs log error {statistics.fmean(abs(e) for e in found_errors):.2f}, "
            f"mean log error {statistics.fmean(found_errors):+.2f} over {len(found_errors)} configs"
        )


def timed_catalog() -> float:
    """Seconds to model every catalog CPU at nine batches for three workloads, every cache emptied first."""
    cpus = [h for h in load() if h.kind == "cpu"]
    asks = [Ask(Precision.fp32, b, h, "torch-eager") for h in cpus for b in (1, 2, 4, 8, 16, 32, 64, 128, 256)]
    forget()
    model._fewer_threads.cache_clear()
    start = time.perf_counter()
    for workload in ("resnet50", "bert_base", "alexnet"):
        prime(workload, Task.infer, asks)
    return time.perf_counter() - start


def speed(rounds: int) -> None:
    timed_catalog()  # the catalog and the profiles loaded
    found: dict[str, list[float]] = defaultdict(list)
    for _ in range(rounds):
        found["with the rule"].append(timed_catalog())
        with mock.patch.object(model, "few_row_shares", lambda c, rows: None):
            found["without"].append(timed_catalog())
    forget()
    with_rule, without = (statistics.median(found[k]) for k in ("with the rule", "without"))
    print(
        f"every catalog CPU x 9 batches x 3 workloads: with the rule {with_rule:.3f} s, without {without:.3f} s, "
        f"{with_rule / without:.2f}x (median of {rounds}, alternately)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, help="a run of benchmarks/cpu_few_rows.toml")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--speed", action="store_true", help="time what the rule costs the catalog's figures")
    parser.add_argument(
        "--batches", action="store_true", help="each batch over batch 1, with the weight passes and without"
    )
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if args.speed:
        speed(args.rounds)
        return
    if args.run is None:
        parser.error("--run RUN.json (a run of benchmarks/cpu_few_rows.toml), or --speed")
    report = RunReport.model_validate_json(args.run.read_text(encoding="utf-8"))
    cpu = report.machine.cpu
    flags = frozenset(cpu.isa_features)
    generation, parts = candidates(cpu.vendor or "", cpu.family or 0, cpu.model or 0, load(), flags)
    if not parts:
        raise SystemExit(f"no catalog generation for {cpu.model_name!r}: add it to benchmarks/lab_cpu.py GENERATIONS")
    parts = [as_probed(p, flags) for p in parts]
    print(f"{cpu.model_name}, {cpu.vendor} family {cpu.family} model {cpu.model} ({generation}): {len(parts)} parts")
    if args.batches:
        batches(report, parts, args.markdown)
        return
    measured: dict[tuple[str, str, int], dict[int, Result]] = defaultdict(dict)
    for r in report.results:
        if r.status is ResultStatus.ok and r.task and r.throughput_samples_per_s and r.threads in (1, 2):
            measured[(r.workload, r.task.value, r.batch_size)][r.threads] = r
    bar = "|" if args.markdown else " "
    columns = ("workload", "task", "batch", "1 thread /s", "2 threads /s", "speedup", "model", "without the rule")
    header(args.markdown, *columns)
    errors: dict[str, list[float]] = defaultdict(list)  # by form and by whether the rule changes the figure
    for (workload, task, batch), by_threads in sorted(measured.items()):
        if len(by_threads) < 2:
            continue
        one, two = by_threads[1], by_threads[2]
        assert one.throughput_samples_per_s and two.throughput_samples_per_s
        found = two.throughput_samples_per_s / one.throughput_samples_per_s
        predicted = speedup(two, parts)
        forget()  # the predictions are cached: the next ones are made without the rule
        with mock.patch.object(model, "few_row_shares", lambda c, rows: None):
            without = speedup(two, parts)
        forget()
        where = "where the rule applies" if not math.isclose(predicted, without, rel_tol=1e-3) else "elsewhere"
        for name, figure in (("the model", predicted), ("without the rule", without)):
            errors[f"{name}, {where}"].append(math.log(figure / found))
        print(
            f"{bar} {workload} {bar} {task} {bar} {batch} {bar} {one.throughput_samples_per_s:,.1f} {bar} "
            f"{two.throughput_samples_per_s:,.1f} {bar} {found:.2f} {bar} {predicted:.2f} {bar} {without:.2f} {bar}"
        )
    print()
    for label, found in sorted(errors.items()):
        print(
            f"{label}: the speedup's mean abs log error {statistics.fmean(abs(e) for e in found):.2f}, "
            f"mean log error {statistics.fmean(found):+.2f} over {len(found)} configs"
        )


if __name__ == "__main__":
    main()
