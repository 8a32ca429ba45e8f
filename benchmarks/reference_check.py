"""The performance model against hwadvisor's own GPU reference runs, which it was never fitted on.

    .venv/bin/python -m benchmarks.reference_check [--all]

For every settled model result of each shipped reference run (app/catalog/data/reference/: an H200
and an H100, measured in torch eager), up to four figures beside the measurement, each with its band:

- ``model``: what the recommender gives a lab that owns no GPU and has no reference run to lean on,
  the modelled estimate on the part's specs alone;
- ``transfer``: the same estimate calibrated by the *other* reference runs (each run left out of its
  own check), as the recommender does for every GPU of their vendor that no run measured
  (app/recommender/estimators/modelled.py, ``lab_correction``): the model says how the parts differ,
  the other run how fast eager PyTorch runs the workload;
- ``between``: where another machine's run of the same part measured batches on both sides of the
  result's, the estimate calibrated by that run alone, as the recommender answers a reference run's
  own part at a batch it did not measure (the run's ratio drawn between its batches, ``at_batch``;
  the H200's batches 8, 32, 128 and 64, 128 of training, from benchmarks/gpu_batches.toml);
- ``twin``: for an fp16 or bf16 result, the estimate calibrated by the other machines' runs at the other
  of the two (``references.TWINS``) and nothing at its own, as the recommender answers a 16-bit
  precision that nothing measured on a kind of device.

Per task, batch and precision: the mean absolute log error, the mean signed error and how often the
band holds the measurement. Last, ``machine``: each run's settled figure as the recommender states it
for the part (``measured``, with its band: how far another machine with the part measures, of the
step's regime) against what each other machine's run measured of the same config, where one did. That
band is made from these very pairs (``references.machine_errors``), so its coverage there is in sample.
``--all`` prints each config. The model's parameters come from published results alone
(scripts/calibrate_perfmodel.py), so the first four are held-out checks, but for the two numbers
the runs set: eager PyTorch's dispatch per operator and autograd factor on a GPU (app/perfmodel/host.py).
Their own check comes first: both measured on the other runs alone, and each run's batch-1 inference
and training errors with them and with the values the published rows gave the fit. Then the eager
stream rate's (app/perfmodel/stream.py), which the runs set too: measured on the inference pairs and
checked on the training pairs, the other way round, and each workload's pairs from the others'. The very
last table, ``pair``, sets the H200 over the H100 as measured beside the model's, where both runs measured
a config and the model puts both steps on the GPU: the parts differ only in their memory. The stream
rate is measured on these very ratios, so that table is in sample.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

from app.catalog import CatalogHardware, reference
from app.catalog import load as catalog
from app.contracts import ReferenceResult, ReferenceRun, Result, Task
from app.perfmodel import host, references, stream
from app.perfmodel.params import shipped as calibration
from app.recommender.estimators.base import Config, Evidence
from app.recommender.estimators.measured import Measured
from app.recommender.estimators.modelled import Modelled
from app.recommender.evidence import LAB, Hardware, Point, catalog_hardware
from app.recommender.guess import Guess

WAYS = ("model", "transfer", "between", "twin")


def model_entries(run: ReferenceRun) -> list[ReferenceResult]:
    """The run's settled torch-eager inference and training results, with the run each came from."""
    return [e for e in reference.settled_models(run) if e.result.runtime == references.EAGER]


def points(run: ReferenceRun, hardware: Hardware, result: Result, but: str | None = None) -> list[Point]:
    """The run's measurements of the result's workload and task (but those of the run ``but``), as the
    recommender sees them."""
    return [
        Point(hardware, run.source, r.runtime, r.precision, r.batch_size, None, r.throughput_samples_per_s or 0.0)
        for e in model_entries(run)
        if e.run != but and (r := e.result).workload == result.workload and r.task is result.task
    ]


def between(run: ReferenceRun, hardware: Hardware, entry: ReferenceResult) -> list[Point]:
    """Another machine's points of the result's config on the run's part, where they measured batches
    on both sides of the result's; none otherwise."""
    r = entry.result
    others = [p for p in points(run, hardware, r, but=entry.run) if p.precision is r.precision]
    batches = [p.batch_size for p in others]
    return others if batches and min(batches) < r.batch_size < max(batches) else []


def twin(
    run: ReferenceRun, hardware: Hardware, entry: ReferenceResult, others: list[tuple[ReferenceRun, Hardware]]
) -> list[Point]:
    """For a 16-bit result, every other machine's points of its workload and task at the twin precision
    (fp16 for bf16 and back: ``references.TWINS``), the run's own part's other machines among them, and
    none at its own: what the recommender calibrates a precision nothing measured with. None for a result
    at another precision."""
    r = entry.result
    other_precision = references.TWINS.get(r.precision)
    found = points(run, hardware, r, but=entry.run) + [p for other, part in others for p in points(other, part, r)]
    return [p for p in found if p.precision is other_precision] if other_precision is not None else []


def host_check(runs: Sequence[ReferenceRun], parts: dict[str, CatalogHardware]) -> None:
    """The host costs measured without each run, and that run's errors with them."""
    found = references.points(runs, parts)
    shipped = calibration().of("gpu")
    fitted = replace(host.with_dispatch(shipped, fitted_dispatch()), autograd=1.0)
    print(
        f"host costs shipped: dispatch {shipped['dispatch_eager_s'] * 1e6:.1f} us per operator, autograd factor "
        f"{shipped.autograd:.3g} (measured on every run; the fit on published rows alone: "
        f"{fitted['dispatch_eager_s'] * 1e6:.1f} us, 1)"
    )
    for run in runs:
        held = host.measured([p for p in found if p.source != run.source], fitted)
        print(
            f"  {run.source}: from the other runs {held['dispatch_eager_s'] * 1e6:.1f} us and {held.autograd:.3g}; "
            "its mean |log err| (signed) as fitted -> with them:"
        )
        for label, keep in (
            ("infer batch 1", lambda p: p.config[1] is Task.infer and p.config[3] == 1),
            ("train", lambda p: p.config[1] is Task.train),
        ):
            steps = [p for p in found if p.source == run.source and keep(p)]
            before, after = references.log_errors(steps, fitted), references.log_errors(steps, held)
            print(f"    {label:<14}{len(steps):>4} results: {_summary(before)} -> {_summary(after)}")


def machine_check(runs: Sequence[ReferenceRun], parts: dict[str, CatalogHardware]) -> None:
    """Each run's settled figure, as the recommender states it for its part, against the same config
    measured on another machine of the part, per task and batch and per regime."""
    by_config: dict[tuple[str, references.Config], list[references.Point]] = defaultdict(list)
    for p in references.points(runs, parts):
        by_config[(p.source, p.config)].append(p)
    groups: dict[str, list[tuple[float, bool, float]]] = defaultdict(list)
    for run in runs:
        hardware = catalog_hardware(parts[run.hardware_id])
        for entry in model_entries(run):
            r = entry.result
            assert r.task is not None and r.throughput_samples_per_s
            config = (r.workload, r.task, r.precision.value, r.batch_size)
            others = [p.throughput for p in by_config[(run.source, config)] if p.run != entry.run]
            if not others:
                continue
            point = Point(hardware, run.source, r.runtime, r.precision, r.batch_size, None, r.throughput_samples_per_s)
            guess = Measured.estimate(
                hardware,
                Config(r.runtime, r.precision, r.batch_size, None, run.source),
                Evidence([point], workload=r.workload, task=r.task),
            )
            assert guess is not None
            why = guess.reasons[0].figures
            for other in others:
                error = math.log(guess.throughput_samples_per_s / other)
                held = guess.throughput_low <= other <= guess.throughput_high
                for group in ("all", f"{r.task.value} batch {r.batch_size}", f"regime {why.get('regime', '-')}"):
                    groups[f"{run.source} {group}"].append((error, held, guess.error_pct))
    print("machine: a run's figure, as stated for its part, against another machine's of the same config")
    print(f"  {'group':<58}{'n':>4} {'|log err|':>10} {'signed':>7} {'band':>6} {'holds':>6}")
    for group, values in sorted(groups.items()):
        mean_abs = statistics.fmean(abs(e) for e, _, _ in values)
        signed = math.exp(statistics.fmean(e for e, _, _ in values)) - 1
        held = sum(h for _, h, _ in values) / len(values)
        band = statistics.median(b for _, _, b in values)
        print(f"  {group:<58}{len(values):>4} {mean_abs:>10.2f} {signed:>+7.0%} {band:>5.0f}% {held:>6.0%}")


def pair_check(runs: Sequence[ReferenceRun], parts: dict[str, CatalogHardware]) -> None:
    """The H200 over the H100 where both runs measured a config and the model puts both steps on the GPU
    (``stream.pairs``): the two parts differ only in their memory, so this is how much of such a step
    follows the bandwidth (docs/ACCURACY.md, "What the two runs say about the model")."""
    params = calibration().of("gpu")
    chosen = [
        p
        for p in stream.pairs(references.points(runs, parts), params)
        if (p.first.device.id, p.second.device.id) == ("h100-sxm5-80gb", "h200-sxm-141gb")
    ]
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for pair, error in zip(chosen, stream.ratio_errors(chosen, params), strict=True):
        # a pair's ratio is the first part (the H100) over the second: turned over, the H200 over the H100
        for group in ("all", f"{pair.config[1].value} {pair.config[2]}"):
            groups[group].append((-pair.measured, -(pair.measured + error)))
    print(
        "pair: the H200 over the H100 where both measured a config and the model puts both steps on the GPU "
        "(in sample: the stream rate is measured on these ratios)"
    )
    print(f"  {'group':<14}{'n':>4} {'measured':>9} {'model':>7}")
    for group, values in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        real = math.exp(statistics.fmean(r for r, _ in values))
        model = math.exp(statistics.fmean(m for _, m in values))
        print(f"  {group:<14}{len(values):>4} {real:>8.2f}x {model:>6.2f}x")


def stream_check(runs: Sequence[ReferenceRun], parts: dict[str, CatalogHardware]) -> None:
    """The eager stream rate measured on some of the pairs and checked on the others: on the inference
    pairs and the training pairs, the other way round, and each workload's from the others'."""
    found = references.points(runs, parts)
    shipped = calibration().of("gpu")
    unlimited = stream.with_stream(shipped, 0.0)
    chosen = stream.pairs(found, unlimited)
    print(
        f"stream rate shipped: {shipped.stream:.3g} bytes per SM per clock (measured on {len(chosen)} configs two "
        "parts measured on the GPU); the checked pairs' mean |log err| of the ratio without it -> with the rate "
        "measured on the others:"
    )
    splits: list[tuple[str, Callable[[stream.Pair], bool]]] = [
        (f"{task.value} from the other task's", lambda p, task=task: p.config[1] is task)
        for task in (Task.infer, Task.train)
    ]
    workloads = sorted({p.config[0] for p in chosen})
    splits += [(f"{w} from the other workloads'", lambda p, w=w: p.config[0] == w) for w in workloads]
    for label, checked in splits:
        held = [p for p in chosen if checked(p)]
        rate = stream.fitted([p for p in chosen if not checked(p)], unlimited)
        if not held or rate is None:
            continue
        before = stream.ratio_errors(held, unlimited)
        after = stream.ratio_errors(held, stream.with_stream(unlimited, rate))
        print(f"  {label:<40}{len(held):>4} pairs, {rate:5.1f}: {_summary(before)} -> {_summary(after)}")


def fitted_dispatch() -> float:
    """The GPU dispatch the fit on published rows gave, before the reference runs measured it."""
    return calibration().fitted_dispatch.get("gpu", calibration().of("gpu")["dispatch_eager_s"])


def _summary(errors: Sequence[float]) -> str:
    return f"{statistics.fmean(map(abs, errors)):.2f} ({math.exp(statistics.fmean(errors)) - 1:+.0%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="print every config")
    args = parser.parse_args()
    parts = {e.id: e for e in catalog()}
    runs = reference.shipped()
    host_check(runs, parts)
    stream_check(runs, parts)
    for run in runs:
        hardware = catalog_hardware(parts[run.hardware_id])
        others = [(other, catalog_hardware(parts[other.hardware_id])) for other in runs if other is not run]
        groups: dict[tuple[str, str], list[tuple[float, bool]]] = defaultdict(list)
        print(f"{run.source}: {run.machine.device(run.device).name}, measured {run.captured}")  # type: ignore[union-attr]
        for entry in model_entries(run):
            r = entry.result
            assert r.task is not None and r.throughput_samples_per_s
            config = Config(r.runtime, r.precision, r.batch_size, None, LAB)
            calibration = [p for other, part in others for p in points(other, part, r)]
            own = between(run, hardware, entry)
            twins = twin(run, hardware, entry, others)
            guesses: dict[str, Guess | None] = {
                "model": Modelled.estimate(hardware, config, Evidence([], workload=r.workload, task=r.task)),
                "transfer": Modelled.estimate(hardware, config, Evidence(calibration, workload=r.workload, task=r.task))
                if calibration
                else None,
                "between": Modelled.estimate(hardware, config, Evidence(own, workload=r.workload, task=r.task))
                if own
                else None,
                "twin": Modelled.estimate(hardware, config, Evidence(twins, workload=r.workload, task=r.task))
                if twins
                else None,
            }
            line = []
            for way, guess in guesses.items():
                if guess is None:
                    line.append(f"{way} {'-':>9}")
                    continue
                error = math.log(guess.throughput_samples_per_s / r.throughput_samples_per_s)
                held = guess.throughput_low <= r.throughput_samples_per_s <= guess.throughput_high
                for group in (
                    "all",
                    f"{r.task.value} {r.precision.value}",
                    f"{r.task.value} batch {r.batch_size}",
                ):
                    groups[(group, way)].append((error, held))
                line.append(
                    f"{way} {guess.throughput_samples_per_s:>9.1f} (+-{guess.error_pct:.0f}%) "
                    f"{math.exp(error):.2f}{' ' if held else '*'}"
                )
            if args.all:
                print(
                    f"  {r.workload:<14}{r.task.value:<6}{r.precision.value:<5}{r.batch_size:>5}  measured "
                    f"{r.throughput_samples_per_s:>9.1f}  " + "  ".join(line)
                )
        if args.all:
            print("  (ratio: estimate / measured; * the band misses the measurement)")
        header = "".join(f" {way + ' |log err|':>20} {'signed':>7} {'band':>5}" for way in WAYS)
        print(f"  {'group':<18}{'n':>4}{header}")
        for group in sorted({g for g, _ in groups}, key=lambda g: (g != "all", g)):
            cells = []
            for way in WAYS:
                values = groups.get((group, way), [])
                if not values:
                    cells.append(f" {'-':>20} {'':>7} {'':>5}")
                    continue
                mean_abs = statistics.fmean(abs(e) for e, _ in values)
                signed = math.exp(statistics.fmean(e for e, _ in values)) - 1
                held = sum(h for _, h in values) / len(values)
                cells.append(f" {mean_abs:>20.2f} {signed:>+7.0%} {held:>5.0%}")
            n = len(groups[(group, "model")])
            print(f"  {group:<18}{n:>4}" + "".join(cells))
    machine_check(runs, parts)
    pair_check(runs, parts)


if __name__ == "__main__":
    main()
