"""How a reference run's measured / modelled ratio is best carried to a batch beyond those the run measured.

    .venv/bin/python -m benchmarks.beyond_batches

The recommender calibrates a run's part at a batch outside the run's batches with the nearest measured
batch's ratio (app/perfmodel/references.py ``at_batch``), scaling the whole modelled step by it. The
alternative tried here: read the ratio as a correction of the device's time alone (solve the step's
smooth max of device and host time for the device's scale at the nearest batch; where the measured
step is below the modelled host time, scale the whole step), then take the smooth max again at the asked
batch: the host's costs are measured on these same runs (app/perfmodel/host.py), so only the kernels
would need correcting. Each settled point whose batch lies beyond the other batches its machine measured
for the same workload, task and precision is predicted both ways from the nearest; per task and regime
(app/perfmodel/bands.py ``regime``), the mean and the 90% quantile of the absolute log errors, and the
mean signed; then the whole step's errors per regime within and past ``references.BEYOND_NEAR`` times
the nearest batch, with how many the regime's transfer band (what such a figure had before
``gpu-beyond``) holds. docs/ACCURACY.md quotes the result.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from app.catalog import load, reference
from app.perfmodel import bands, references
from app.perfmodel.model import OVERLAP, Breakdown, steps
from app.perfmodel.params import shipped as calibration
from app.perfmodel.predict import band_of

Measured = tuple[references.Point, Breakdown]


def _smooth_max(a: float, b: float) -> float:
    return float((a**OVERLAP + b**OVERLAP) ** (1.0 / OVERLAP))


def whole_step(nearest: Sequence[Measured], asked: Breakdown) -> float:
    """The asked batch's step: the modelled step over the nearest batch's mean measured / modelled ratio."""
    ratio = statistics.fmean(math.log(p.case.batch / p.throughput / m.seconds) for p, m in nearest)
    return asked.seconds * math.exp(ratio)


def device_only(nearest: Sequence[Measured], asked: Breakdown) -> float:
    """The asked batch's step with the device's time scaled so the nearest batch's step is what it measured."""
    scales: list[float] = []
    whole = False
    for p, m in nearest:
        step = p.case.batch / p.throughput
        if step > m.host_s:
            scales.append((step**OVERLAP - m.host_s**OVERLAP) ** (1.0 / OVERLAP) / m.device_s)
        else:  # faster than the modelled host: no device time explains it
            scales.append(step / m.seconds)
            whole = True
    scale = math.exp(statistics.fmean(math.log(s) for s in scales))
    return asked.seconds * scale if whole else _smooth_max(asked.device_s * scale, asked.host_s)


def main() -> None:
    found = references.points(reference.shipped(), {e.id: e for e in load()})
    modelled = steps([p.case for p in found], calibration().of("gpu"))
    curves: dict[tuple[str, str, str], list[Measured]] = defaultdict(list)
    for p, m in zip(found, modelled, strict=True):
        workload, task, precision, _ = p.config
        curves[(p.run, workload, f"{task.value} {precision}")].append((p, m))
    errors: dict[str, list[tuple[float, float]]] = defaultdict(list)
    by_distance: dict[tuple[str, bool], list[float]] = defaultdict(list)
    for curve in curves.values():
        for p, m in curve:
            others = [(q, n) for q, n in curve if q.case.batch != p.case.batch]
            if not others:
                continue
            below = [q.case.batch for q, _ in others if q.case.batch < p.case.batch]
            above = [q.case.batch for q, _ in others if q.case.batch > p.case.batch]
            if below and above:
                continue  # between two measured batches: the between band's case, not this one
            nearest_batch = max(below) if below else min(above)
            nearest = [(q, n) for q, n in others if q.case.batch == nearest_batch]
            step = p.case.batch / p.throughput
            pair = (math.log(step / whole_step(nearest, m)), math.log(step / device_only(nearest, m)))
            task, which = p.config[1].value, bands.regime(m.host_s, m.device_s)
            for group in (f"{task}, {which}-bound", "all"):
                errors[group].append(pair)
            by_distance[(which, references.beyond(p.case.batch, [nearest_batch]))].append(pair[0])
    for group, pairs in sorted(errors.items()):
        cells = []
        for name, k in (("whole step", 0), ("device only", 1)):
            chosen = [pair[k] for pair in pairs]
            absolute = [abs(e) for e in chosen]
            cells.append(
                f"{name}: mean {statistics.fmean(absolute):.3f}, q90 {bands.quantile(absolute) or 0.0:.3f}, "
                f"signed {statistics.fmean(chosen):+.3f}"
            )
        print(f"{group} ({len(pairs)}): " + "; ".join(cells))
    print(f"the whole step, within and past {references.BEYOND_NEAR:g}x the nearest batch:")
    for (which, far), found in sorted(by_distance.items()):
        absolute = [abs(e) for e in found]
        transfer = band_of(bands.in_regime("gpu-transfer", which), "gpu-transfer", "gpu")
        held = sum(e <= transfer for e in absolute) / len(absolute)
        where = "past" if far else "within"
        print(
            f"  {which}-bound, {where} ({len(found)}): q90 {bands.quantile(absolute) or 0.0:.3f}, "
            f"the transfer band ±{bands.as_pct(transfer):.0f}% holds {held:.0%}"
        )


if __name__ == "__main__":
    main()
