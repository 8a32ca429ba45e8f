"""The CPU model's level from the lab CPUs' own figures (app/perfmodel/lab_levels.py)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import replace

import pytest

from app.catalog import load
from app.perfmodel.calibrate import Fit, fit
from app.perfmodel.lab_levels import LAB_WEIGHT, calibrated, figures, observations
from app.perfmodel.params import shipped as calibration
from app.perfmodel.runtime_pairs import factors, on_tiles, with_factors
from app.perfmodel.runtime_pairs import shipped as pairs
from benchmarks.accuracy import openvino_rows


def test_each_figure_is_spread_over_its_generations_parts_and_weighs_one_lab_figure() -> None:
    catalog = load()
    zen4 = next(m for m in pairs().machines if m.name == "vm-zen4")
    found = observations([zen4], catalog)
    by: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for o in found:
        assert o.group is None  # the lab's own stacks: no stack factor, they set the level
        assert o.device.id in {p.id for p in zen4.parts(catalog)}
        by[(o.profile.workload, o.runtime, o.batch)].append(o.weight)
    assert len(by) == 2 * len(zen4.pairs)  # eager and the graph runtime, per pair
    for weights in by.values():
        assert len(weights) == len(zen4.parts(catalog))
        assert sum(weights) == pytest.approx(LAB_WEIGHT)


@pytest.mark.slow
def test_the_lab_figures_set_the_level_openvinos_stack_factor_could_not() -> None:
    catalog, machines, openvino = load(), pairs().machines, openvino_rows({e.id: e for e in load()})
    alone = fit(openvino, "cpu")  # the level before the lab's figures, with the eager factors their pairs give
    before = replace(alone, params=with_factors(alone.params, factors(machines, catalog, alone.params)))
    after = calibrated(openvino, machines, catalog)

    # OpenVINO's rows alone leave the level to the priors: the lab's figures came out 0.76x
    assert _mean_log_error(before) < -0.2
    assert abs(_mean_log_error(after)) < 0.1
    # the eager kernel factors come with it, from the same machines' ratios
    assert 0.3 < after.params.eager_conv < after.params.eager_kernel < 1.0
    # OpenVINO's rows are still met, by their stack factor
    assert set(after.stacks) == set(before.stacks)


def test_the_shipped_cpu_calibration_carries_the_lab_level() -> None:
    shipped = calibration()
    catalog = load()
    tiled = [on_tiles(p, m.parts(catalog)) for m in pairs().machines for p in m.pairs]
    # the level's figures are the vector units' pairs, eager and graph; the pairs on AMX's tiles are not
    assert shipped.observations["cpu-lab"] == 2 * tiled.count(False)
    assert shipped.observations["cpu-lab-tiles"] == tiled.count(True) > 0
    level = observations(pairs().machines, catalog)
    assert level and not [o for o in level if o.label.startswith("vm-xeon-emr-amx")]
    assert abs(_mean_log_error(Fit(shipped.of("cpu"), {}, {}))) < 0.1


def _mean_log_error(fitted: Fit) -> float:
    """The model's mean log error over every lab figure (median over each machine's parts)."""
    catalog = load()
    found = [f for m in pairs().machines for f in figures(fitted, m, catalog)]
    return statistics.fmean(math.log(f.predicted / f.measured) for f in found)
