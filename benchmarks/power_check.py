"""The modelled board power against what hwadvisor's GPU reference runs read from NVML (never fitted:
the power model learns from MLPerf Power and idle readings only, app/perfmodel/data/power.json).

    .venv/bin/python -m benchmarks.power_check

Every settled model result of the shipped reference runs (app/catalog/data/reference/) that read its
board power is predicted three ways, side by side:

- ``tdp``: the board's TDP, what a budget would assume with no model;
- ``model``: the power model at the uncalibrated step's utilisation of compute and memory;
- ``calibrated``: the same at the utilisation of the figure as the recommender states it, the model's
  step scaled by the measured / modelled throughput (``speedup`` of app/recommender/power.py
  ``modelled_draw``). Here the throughput is the row's own, so this column checks the power model given
  the right throughput, which is what a part calibrated by a measurement (its twin precision, another
  batch, a reference run of a sibling part) is given.

Printed per batch regime and per part: mean absolute and mean signed relative error.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence

from app.catalog import get, reference
from app.perfmodel.predict import predict
from app.recommender.power import modelled_draw

WAYS = ("tdp", "model", "calibrated")


def _group(batch: int) -> str:
    if batch == 1:
        return "batch 1"
    return "batch 2-32" if batch <= 32 else "batch 33+"


def draws() -> dict[str, list[tuple[float, dict[str, float]]]]:
    """Per group (all, batch regime, part): (measured W, {way: predicted W}) for each reference row."""
    found: dict[str, list[tuple[float, dict[str, float]]]] = defaultdict(list)
    for row in reference.published_rows():
        if not row.mean_power_w or row.task is None:
            continue
        spec = get(row.hardware_id)
        modelled = predict(row.workload, row.task, row.precision, row.batch_size, spec, runtime=row.runtime)
        if modelled is None or not spec.tdp_w:
            continue
        speedup = row.throughput_samples_per_s / modelled.throughput
        model, _, _ = modelled_draw(spec, modelled.breakdown)
        calibrated, _, _ = modelled_draw(spec, modelled.breakdown, speedup)
        if model is None or calibrated is None:
            continue
        ways = {"tdp": spec.tdp_w, "model": model, "calibrated": calibrated}
        for group in ("all", _group(row.batch_size), row.hardware_id):
            found[group].append((row.mean_power_w, ways))
    return found


def summary(rows: Sequence[tuple[float, dict[str, float]]]) -> str:
    cells = []
    for way in WAYS:
        errors = [ways[way] / measured - 1 for measured, ways in rows]
        mean_abs = 100 * statistics.mean(abs(e) for e in errors)
        cells.append(f"{mean_abs:.1f}% ({100 * statistics.mean(errors):+.1f}%)")
    return " | ".join(cells)


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    found = draws()
    out("| rows | n | " + " | ".join(f"{way}: mean abs (signed)" for way in WAYS) + " |")
    out("|---|---|" + "---|" * len(WAYS))
    for group in sorted(found, key=lambda g: (g != "all", not g.startswith("batch"), g)):
        out(f"| {group} | {len(found[group])} | {summary(found[group])} |")


if __name__ == "__main__":
    main()
