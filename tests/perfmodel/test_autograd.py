"""The autograd factor is measured on the GPU reference runs (app/perfmodel/autograd.py): it recovers a
factor that made the data, and the shipped one is what the runs measured."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.catalog import load, reference
from app.contracts import Task
from app.perfmodel import autograd, references
from app.perfmodel.params import shipped


def reference_points() -> list[references.Point]:
    return references.points(reference.shipped(), {e.id: e for e in load()})


def test_the_factor_that_made_the_training_steps_is_recovered() -> None:
    params = shipped().of("gpu")
    found = reference_points()
    made = replace(params, autograd=3.0)
    # each point's measurement replaced by what the model says with the factor at 3
    modelled = [
        replace(p, throughput=p.throughput * math.exp(e))
        for p, e in zip(found, references.log_errors(found, made), strict=True)
    ]
    assert autograd.measure(modelled, params) == pytest.approx(3.0, rel=0.05)
    assert autograd.measure([p for p in modelled if p.config[1] is Task.infer], params) is None


def test_the_shipped_factor_is_what_the_reference_runs_measure_and_it_helps_on_each() -> None:
    params = shipped().of("gpu")
    found = reference_points()
    assert 1.0 < params.autograd < 4.0
    assert autograd.measure(found, params) == pytest.approx(params.autograd, rel=0.01)
    for source in {p.source for p in found}:
        training = [p for p in found if p.source == source and p.config[1] is Task.train]
        factor = autograd.measure([p for p in found if p.source != source], params)
        assert factor is not None
        without = references.log_errors(training, replace(params, autograd=1.0))
        held_out = references.log_errors(training, replace(params, autograd=factor))
        assert sum(map(abs, held_out)) < sum(map(abs, without)), source
    assert shipped().of("cpu").autograd == 1.0
