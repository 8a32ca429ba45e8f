"""The modelled board power against what hwadvisor's GPU reference runs read from NVML, each run's part
predicted by a power model fitted without it.

    .venv/bin/python -m benchmarks.power_check [--datasets ../shared/datasets]

Every settled model result of the shipped reference runs that read its board power (766 on an H100
and an H200, app/perfmodel/reference_readings.py) is predicted four ways, side by side:

- ``tdp``: the board's TDP, what a budget would assume with no model;
- ``mlperf, bare``: the power model fitted on MLPerf Power and an idle reading only, at the bare
  performance model's utilisation of the config (the product until session 28);
- ``mlperf, at rate``: the same fit at the utilisation of the throughput measured, the work the figure
  does per second (``speedup`` of app/recommender/power.py ``modelled_draw``; the throughput is the
  row's own, which is what a part calibrated by a measurement is given);
- ``held out``: the power model fitted as scripts/calibrate_power.py fits it, on MLPerf, the idle
  reading and the reference runs' readings, less every reading of this part (its reference run's,
  its MLPerf rows, its idle reading), at the measured rate: the shipped model as it stands for a part
  nothing of which it was fitted on.

Printed per batch regime and per part: mean absolute and mean signed error of predicted over
measured. Then the calibration's own leave-one-part-out over MLPerf's uncapped rows (A100s, H100,
RTX 4090), with and without the reference runs in the fits.

Last, what the recommender does *not* do, and why (``carried``): a part's draw taken as the model's
load times another part's measured over modelled load at the same config (the median of its readings
there), as a measured throughput calibrates the model's. Held out the same way, on the reference runs
(the H100 from the H200's readings and back: one board class, 700 W SXM parts of one architecture) and
on MLPerf's uncapped rows (each part from the other parts' rows of its benchmark, then from those of its
architecture alone: A100 PCIe from A100 SXM and back). It carries between the two Hopper boards and not
across board classes, where the parts it would serve (an H100 PCIe or NVL, an A10) stand.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from app.perfmodel import reference_readings
from app.perfmodel.power import limit_w
from app.perfmodel.power_calibration import gather, uncapped
from app.perfmodel.power_fit import Fit, Observation, fit, leave_one_part_out
from app.perfmodel.readings import idle_readings

ROOT = Path(__file__).resolve().parents[1]
IDLE = ROOT / "tests" / "fixtures" / "machines" / "h100" / "nvidia-smi-q.txt"
WAYS = ("tdp", "mlperf, bare", "mlperf, at rate", "held out")
Rows = dict[str, list[tuple[float, dict[str, float]]]]


def idle() -> list[Observation]:
    """The idle reading scripts/calibrate_power.py fits on by default."""
    try:
        return idle_readings([IDLE], ROOT)
    except (OSError, ValueError) as error:
        raise SystemExit(str(error)) from None


def mlperf_and_idle(datasets: Path) -> list[Observation]:
    """What the power model was fitted on before the reference runs: MLPerf Power's rows and the idle
    reading, read once for every fit below."""
    return gather(datasets, idle()).observations


def _group(label: str) -> str:
    batch = int(label.rsplit(" ", 1)[-1])
    if batch == 1:
        return "batch 1"
    return "batch 2-32" if batch <= 32 else "batch 33+"


def fits_without(pool: Sequence[Observation]) -> Callable[[str], Fit]:
    """The power model fitted on ``pool`` less every observation of a part, each part's fit made once."""
    return cache(lambda part: fit([o for o in pool if o.part != part]))


def draws(
    mlperf: Sequence[Observation], at_rate: Sequence[Observation], without: Callable[[str], Fit] | None = None
) -> Rows:
    """Per group (all, batch regime, part): (measured W, {way: predicted W}) for each reference reading
    (``at_rate``: ``reference_readings.readings()``; ``mlperf``: ``mlperf_and_idle``; ``without``:
    ``fits_without`` of the two, where the caller has one)."""
    bare = reference_readings.readings(at_measured_rate=False)
    only_mlperf = fit(mlperf)
    without = without or fits_without([*mlperf, *at_rate])
    found: Rows = defaultdict(list)
    for part in sorted({o.part for o in at_rate}):
        held_out = without(part)  # none of the part's: MLPerf's, idle
        for measured, unmeasured in zip(at_rate, bare, strict=True):
            if measured.part != part:
                continue
            ways = {
                "tdp": measured.hardware.tdp_w or 0.0,
                "mlperf, bare": only_mlperf.device_draw_w(unmeasured),
                "mlperf, at rate": only_mlperf.device_draw_w(measured),
                "held out": held_out.device_draw_w(measured),
            }
            for group in ("all", _group(measured.label), part):
                found[group].append((measured.watts, ways))
    return found


def mlperf_held_out(
    mlperf: Sequence[Observation], at_rate: Sequence[Observation]
) -> dict[str, tuple[int, float, float]]:
    """MLPerf's uncapped rows (in ``mlperf``, with the idle reading), each part predicted from fits without
    it: with and without the reference runs' readings (``at_rate``) in those fits, which gather them so
    (app/perfmodel/power_calibration.py). Per case: rows, mean absolute and mean signed error of measured
    over predicted (the calibration's own measure, data/power.json)."""
    found = {}
    for name, observations in (("without the reference runs", mlperf), ("with them", [*mlperf, *at_rate])):
        held = [
            h
            for h in leave_one_part_out(observations, evaluate=uncapped)
            if not h.observation.label.startswith("reference:")
        ]
        errors = [h.error for h in held]
        found[name] = (len(held), statistics.mean(abs(e) for e in errors), statistics.mean(errors))
    return found


def _load_ratio(model: Fit, o: Observation) -> float:
    """How far between idle and limit the device's measured draw is, over how far the model puts it."""
    idle = model.idle_w(o)
    return (model.measured_device_w(o) - idle) / (limit_w(o.hardware) - idle) / max(model.load(o), 1e-9)


def carried(
    without: Callable[[str], Fit],
    asked: Sequence[Observation],
    config: Callable[[Observation], str],
    kin: Callable[[Observation, Observation], bool] = lambda a, b: True,
) -> list[tuple[float, float, float]]:
    """Each of ``asked`` predicted by the fit ``without`` its part (``fits_without``), as modelled and as
    carried: the model's load times the median ratio (``_load_ratio``) of the other parts' ``asked`` at the
    same ``config`` that are ``kin`` to it, the model's where none is. Per observation, in device watts: (its
    measured draw as that fit reads it, a system's wall less the fit's host; modelled; carried)."""
    found = []
    for part in sorted({o.part for o in asked}):
        model = without(part)
        ratios: dict[str, list[tuple[Observation, float]]] = defaultdict(list)
        for o in asked:
            if o.part != part:
                ratios[config(o)].append((o, _load_ratio(model, o)))
        for o in (o for o in asked if o.part == part):
            kin_ratios = [r for other, r in ratios[config(o)] if kin(o, other)]
            modelled = model.device_draw_w(o)
            moved = modelled
            if kin_ratios:
                moved = model.device_draw_w(o, min(1.0, max(0.0, model.load(o) * statistics.median(kin_ratios))))
            found.append((model.measured_device_w(o), modelled, moved))
    return found


def carried_lines(
    mlperf: Sequence[Observation], at_rate: Sequence[Observation], without: Callable[[str], Fit]
) -> list[str]:
    """``carried`` on the reference runs and on MLPerf's uncapped rows, as lines to print (``without``:
    ``fits_without`` of the two)."""
    rows = carried(without, at_rate, lambda o: o.label.split(" ", 1)[1])  # the config less its source
    modelled, moved = [m / w - 1 for w, m, _ in rows], [c / w - 1 for w, _, c in rows]
    lines = [
        f"- reference runs, the H100 from the H200's readings and back ({len(rows)} readings, {_moved(rows)} "
        f"carried; predicted over measured): model {_pct(modelled)}, carried {_pct(moved)}"
    ]
    systems = [o for o in mlperf if o.system and uncapped(o)]
    for name, kin in (
        ("every other part", lambda a, b: True),
        ("parts of its architecture", lambda a, b: a.hardware.architecture == b.hardware.architecture),
    ):
        rows = carried(without, systems, lambda o: o.label.split()[1], kin)  # the benchmark
        lines.append(
            f"- MLPerf's uncapped rows from {name} ({len(rows)} rows, {_moved(rows)} carried; measured over "
            f"predicted): "
            f"model {_pct([w / m - 1 for w, m, _ in rows])}, carried {_pct([w / c - 1 for w, _, c in rows])}"
        )
    return lines


def _moved(rows: Sequence[tuple[float, float, float]]) -> int:
    """How many rows had another part's ratio to carry."""
    return sum(c != m for _, m, c in rows)


def _pct(errors: Sequence[float]) -> str:
    return f"{100 * statistics.mean(abs(e) for e in errors):.1f}% ({100 * statistics.mean(errors):+.1f}%)"


def summary(rows: Sequence[tuple[float, dict[str, float]]]) -> str:
    cells = []
    for way in WAYS:
        errors = [ways[way] / measured - 1 for measured, ways in rows]
        cells.append(f"{100 * statistics.mean(abs(e) for e in errors):.1f}% ({100 * statistics.mean(errors):+.1f}%)")
    return " | ".join(cells)


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = parser.parse_args(argv)
    if not (args.datasets / "mlperf-power").is_dir():
        parser.error(f"the power model is fitted on MLPerf Power: {args.datasets}/mlperf-power is missing (--datasets)")
    at_rate = reference_readings.readings()
    mlperf = mlperf_and_idle(args.datasets)
    without = fits_without([*mlperf, *at_rate])  # each part's held-out fit, shared by every section
    found = draws(mlperf, at_rate, without)
    out("| rows | n | " + " | ".join(f"{way}: mean abs (signed)" for way in WAYS) + " |")
    out("|---|---|" + "---|" * len(WAYS))
    for group in sorted(found, key=lambda g: (g != "all", not g.startswith("batch"), g)):
        out(f"| {group} | {len(found[group])} | {summary(found[group])} |")
    out("")
    out("MLPerf's uncapped rows, each part held out (measured over predicted):")
    for name, (rows, mean_abs, signed) in mlperf_held_out(mlperf, at_rate).items():
        out(f"- {name}: {rows} rows, mean abs error {100 * mean_abs:.1f}% (signed {100 * signed:+.1f}%)")
    out("")
    out("A part's draw carried from other parts' measured over modelled load at the same config, held out:")
    for line in carried_lines(mlperf, at_rate, without):
        out(line)


if __name__ == "__main__":
    main()
