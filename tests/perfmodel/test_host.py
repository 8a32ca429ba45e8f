"""Eager PyTorch's host costs on a GPU are measured on the reference runs (app/perfmodel/host.py): each
measurement recovers the value that made the data, and the shipped ones are what the runs measure."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.catalog import load, reference
from app.contracts import Task
from app.perfmodel import host, references
from app.perfmodel.model import Params
from app.perfmodel.params import shipped


def reference_points() -> list[references.Point]:
    return references.points(reference.shipped(), {e.id: e for e in load()})


def made_by(params: Params) -> list[references.Point]:
    """Every reference point with its measurement replaced by what ``params`` model."""
    found = reference_points()
    return [
        replace(p, throughput=p.throughput * math.exp(e))
        for p, e in zip(found, references.log_errors(found, params), strict=True)
    ]


def test_the_dispatch_and_the_factor_that_made_the_steps_are_recovered() -> None:
    params = shipped().of("gpu")
    modelled = made_by(replace(host.with_dispatch(params, 3.5e-5), autograd=3.0))
    found = host.measured(modelled, replace(host.with_dispatch(params, 1e-5), autograd=1.0))
    assert found["dispatch_eager_s"] == pytest.approx(3.5e-5, rel=0.05)
    assert found.autograd == pytest.approx(3.0, rel=0.05)
    assert host.autograd([p for p in modelled if p.config[1] is Task.infer], params) is None
    assert host.dispatch([p for p in modelled if p.config[1] is Task.train], params) is None


def test_the_shipped_costs_are_what_the_reference_runs_measure_and_each_run_gains_from_the_others() -> None:
    calibration = shipped()
    params = calibration.of("gpu")
    assert 5e-6 < params["dispatch_eager_s"] < 5e-5 and 1.0 < params.autograd < 4.0
    fitted = replace(host.with_dispatch(params, calibration.fitted_dispatch["gpu"]), autograd=1.0)
    found = reference_points()
    measured = host.measured(found, fitted)
    assert measured["dispatch_eager_s"] == pytest.approx(params["dispatch_eager_s"], rel=0.01)
    assert measured.autograd == pytest.approx(params.autograd, rel=0.01)
    for source in {p.source for p in found}:
        held = host.measured([p for p in found if p.source != source], fitted)
        own = [p for p in found if p.source == source and (p.config[1] is Task.train or p.config[3] == 1)]
        without = references.log_errors(own, fitted)
        held_out = references.log_errors(own, held)
        assert sum(map(abs, held_out)) < sum(map(abs, without)), source
    assert shipped().of("cpu").autograd == 1.0
