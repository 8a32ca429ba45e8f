"""The shipped advisor against a GPU machine it has never seen: what a lab is told of that GPU, beside
what the machine measured.

    .venv/bin/python -m benchmarks.heldout_gpu EXPORT.jsonl [--all]

EXPORT is what `hwadvisor db export` wrote on the machine after benchmarks/gpu_truth.sh (kept in
benchmarks/data/gpu_truth/), a machine whose results no shipped calibration and no shipped reference run
holds. Its first job is the measurement; for each of that job's settled torch-eager inference and
training results, three figures, each with its band:

- ``api``: POST /api/v1/predictions on the app as it ships (a fresh SQLite database: the catalog, the
  published rows, the reference runs), the answer a procurement tool gets. Where a shipped reference
  run measured the part, that is the part's figure from other machines (``measured``, its band how far
  machines of a part measure apart); elsewhere the model calibrated by the runs;
- ``transfer``: the model calibrated by the shipped runs of the *other* parts alone
  (app/recommender/estimators/modelled.py, ``lab_correction``): what the advisor says of a GPU nobody
  measured, here a part it could have known;
- ``model``: the model on the part's specs and the profile alone, no run of any GPU behind it.

Per task and batch, and per task and precision: the mean absolute log error, the mean signed error (the
estimate over the measurement) and how often the band holds the measurement. Last, ``repeat``: where
the machine ran the same configs again in a later job, the later over the first, the floor under any
figure of a step the host bounds. ``--all`` prints each config.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from app.catalog import load as catalog
from app.catalog import reference
from app.contracts import ReferenceRun, Result
from app.perfmodel import references
from app.recommender.estimators.base import Config, Evidence
from app.recommender.estimators.modelled import Modelled
from app.recommender.evidence import LAB, catalog_hardware
from benchmarks.pairs_sweep import shipped_client
from benchmarks.reference_check import points

WAYS = ("api", "transfer", "model")
Figure = tuple[float, float, float]
"""An estimate: the throughput, the band's low and high ends."""


@functools.cache
def _build_reference() -> ModuleType:
    """scripts/build_reference.py, which reads the exports (a script, not a package: loaded by path)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / "build_reference.py"
    spec = importlib.util.spec_from_file_location("build_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def built(exports: Sequence[Path]) -> ReferenceRun:
    """The exports as scripts/build_reference.py reads them (settled results, the later of a run's twice)."""
    run: ReferenceRun = _build_reference().build(list(exports))
    return run


def jobs(exports: Sequence[Path]) -> dict[str, str]:
    """Each run's job, from the exports' runs tables."""
    return {row["id"]: row["job_id"] for export in exports for row in _build_reference().rows(export, "runs")}


def key(result: Result) -> tuple[str, str, str, int]:
    assert result.task is not None
    return (result.workload, result.task.value, result.precision.value, result.batch_size)


def measured(run: ReferenceRun, job_of: dict[str, str]) -> tuple[dict[tuple[str, str, str, int], Result], ...]:
    """The settled eager model results per job, in the order the jobs started: the first job's, the next's."""
    order: list[str] = []
    for info in run.runs:
        if job_of[info.id] not in order:
            order.append(job_of[info.id])
    per_job: dict[str, dict[tuple[str, str, str, int], Result]] = {job: {} for job in order}
    for entry in reference.settled_models(run):
        if entry.result.runtime == references.EAGER:
            per_job[job_of[entry.run]][key(entry.result)] = entry.result
    return tuple(per_job[job] for job in order)


def api_figures(part: str, asked: Sequence[Result]) -> dict[tuple[str, str, str, int], Figure]:
    """What POST /api/v1/predictions answers for each result's config on the part, as the app ships."""
    found = {}
    with shipped_client() as (client, headers):
        for r in asked:
            body = {
                "catalog_id": part,
                "workload": r.workload,
                "task": r.task.value if r.task is not None else None,
                "runtime": r.runtime,
                "precision": r.precision.value,
                "batch_size": r.batch_size,
            }
            response = client.post("/api/v1/predictions", json=body, headers=headers)
            if response.status_code == 200:
                answer: dict[str, Any] = response.json()
                found[key(r)] = (
                    answer["throughput_samples_per_s"],
                    answer["throughput_low"],
                    answer["throughput_high"],
                )
    return found


def modelled_figures(run: ReferenceRun, asked: Sequence[Result]) -> dict[str, dict[tuple[str, str, str, int], Figure]]:
    """The model alone, and calibrated by the shipped runs of the other parts, for each result's config."""
    parts = {e.id: e for e in catalog()}
    hardware = catalog_hardware(parts[run.hardware_id])
    others = [
        (other, catalog_hardware(parts[other.hardware_id]))
        for other in reference.shipped()
        if other.hardware_id != run.hardware_id
    ]
    found: dict[str, dict[tuple[str, str, str, int], Figure]] = {"transfer": {}, "model": {}}
    for r in asked:
        assert r.task is not None
        config = Config(r.runtime, r.precision, r.batch_size, None, LAB)
        calibration = [p for other, part in others for p in points(other, part, r)]
        for way, chosen in (("transfer", calibration), ("model", [])):
            if way == "transfer" and not chosen:
                continue
            guess = Modelled.estimate(hardware, config, Evidence(chosen, workload=r.workload, task=r.task))
            if guess is not None:
                found[way][key(r)] = (guess.throughput_samples_per_s, guess.throughput_low, guess.throughput_high)
    return found


def groups_of(k: tuple[str, str, str, int]) -> tuple[str, ...]:
    _, task, precision, batch = k
    return ("all", f"{task} batch {batch}", f"{task} {precision}")


def summary(values: Sequence[tuple[float, bool]]) -> str:
    mean_abs = statistics.fmean(abs(e) for e, _ in values)
    signed = math.exp(statistics.fmean(e for e, _ in values)) - 1
    held = sum(h for _, h in values) / len(values)
    return f"{mean_abs:>10.2f} {signed:>+7.0%} {held:>5.0%}"


def report(
    truth: dict[tuple[str, str, str, int], Result],
    figures: dict[str, dict[tuple[str, str, str, int], Figure]],
    out: Callable[[str], None] = print,
) -> None:
    grouped: dict[tuple[str, str], list[tuple[float, bool]]] = defaultdict(list)
    for k, r in truth.items():
        real = r.throughput_samples_per_s
        assert real
        for way in WAYS:
            figure = figures[way].get(k)
            if figure is None:
                continue
            value, low, high = figure
            for group in groups_of(k):
                grouped[(group, way)].append((math.log(value / real), low <= real <= high))
    header = "".join(f" {way + ' |log err|':>18} {'signed':>7} {'band':>5}" for way in WAYS)
    out(f"  {'group':<22}{'n':>4}{header}")
    names = sorted({g for g, _ in grouped}, key=lambda g: (g != "all", g))
    for group in names:
        cells = [summary(grouped[(group, way)]).rjust(32) if grouped.get((group, way)) else " " * 32 for way in WAYS]
        n = max(len(grouped.get((group, way), [])) for way in WAYS)
        out(f"  {group:<22}{n:>4}" + "".join(cells))
    out("  (log error of the estimate over the measurement; signed: geometric mean; band: how often it holds it)")


def repeat(first: dict[tuple[str, str, str, int], Result], later: dict[tuple[str, str, str, int], Result]) -> None:
    """The later job's figure over the first job's, per task and batch."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for k, r in later.items():
        if k in first:
            ratio = math.log((r.throughput_samples_per_s or 0.0) / (first[k].throughput_samples_per_s or 1.0))
            for group in groups_of(k)[:2]:
                grouped[group].append(ratio)
    print("repeat: the same machine's later job over its first, the same configs")
    print(f"  {'group':<22}{'n':>4} {'|log|':>6} {'median':>7} {'range':>15}")
    for group in sorted(grouped, key=lambda g: (g != "all", g)):
        values = grouped[group]
        low, high = math.exp(min(values)), math.exp(max(values))
        print(
            f"  {group:<22}{len(values):>4} {statistics.fmean(map(abs, values)):>6.2f} "
            f"{math.exp(statistics.median(values)):>6.2f}x {low:>6.2f}-{high:.2f}x"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exports", type=Path, nargs="+")
    parser.add_argument("--all", action="store_true", help="print every config")
    args = parser.parse_args(argv)
    run = built(args.exports)
    uuids = {info.gpu_uuid for info in run.runs if info.gpu_uuid}
    shipped_uuids = {info.gpu_uuid for other in reference.shipped() for info in other.runs if info.gpu_uuid}
    if uuids & shipped_uuids:
        sys.exit(
            f"a shipped reference run already holds this machine ({', '.join(sorted(uuids & shipped_uuids))}): "
            "run this at a commit from before it joined (docs/ACCURACY.md names it), in a worktree of that commit"
        )
    per_job = measured(run, jobs(args.exports))
    truth = per_job[0]
    asked = list(truth.values())
    figures = {"api": api_figures(run.hardware_id, asked), **modelled_figures(run, asked)}
    gpu = run.machine.device(run.device)
    print(
        f"{run.hardware_id}: {gpu.name if gpu else '?'} on a machine no shipped run holds, measured {run.captured}, "
        f"its first job's {len(truth)} settled eager model results"
    )
    if args.all:
        for k, r in sorted(truth.items()):
            cells = []
            real = r.throughput_samples_per_s or 0.0
            for way in WAYS:
                figure = figures[way].get(k)
                if figure is None:
                    cells.append(f"{way} {'-':>9}")
                    continue
                held = " " if figure[1] <= real <= figure[2] else "*"
                cells.append(f"{way} {figure[0]:>9.1f} {figure[0] / real:.2f}{held}")
            print(f"  {' '.join(map(str, k)):<30} measured {r.throughput_samples_per_s:>9.1f}  " + "  ".join(cells))
    report(truth, figures)
    for later in per_job[1:]:
        repeat(truth, later)


if __name__ == "__main__":
    main()
