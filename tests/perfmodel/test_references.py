"""The between band's errors (app/perfmodel/references.py, ``between_errors``): a result predicted from
another machine's run of its part, drawn between that run's batches, errs by what moves between them."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.perfmodel import references
from app.perfmodel.params import shipped
from tests.perfmodel.test_host import made_by


def test_a_run_the_model_describes_up_to_a_line_in_log_batch_is_predicted_exactly_between_its_batches() -> None:
    params = shipped().of("gpu")
    # measured = modelled x a ratio that moves along a line in log(batch), the same on every machine
    found = [
        replace(p, throughput=p.throughput * math.exp(0.3 - 0.05 * math.log(p.config[3]))) for p in made_by(params)
    ]
    errors = references.between_errors(found, params)
    assert errors and max(map(abs, errors)) < 1e-9


def test_a_faster_machine_is_what_the_between_error_measures_and_only_inside_the_others_batches() -> None:
    params = shipped().of("gpu")
    modelled = made_by(params)
    inside: dict[str, int] = {}
    for p in modelled:
        others = [
            q.config[3] for q in modelled if q.source == p.source and q.run != p.run and q.config[:3] == p.config[:3]
        ]
        if others and min(others) < p.config[3] < max(others):
            inside[p.run] = inside.get(p.run, 0) + 1
    faster = max(inside, key=lambda run: inside[run])
    found = [replace(p, throughput=p.throughput * (1.3 if p.run == faster else 1.0)) for p in modelled]
    errors = references.between_errors(found, params)
    assert len(errors) == sum(inside.values())
    # the faster machine's results, drawn from the others alone, come out 1.3x too slow; the others'
    # results, drawn partly from it, too fast by at most as much
    slow = [e for e in errors if e == pytest.approx(-math.log(1.3))]
    assert len(slow) == inside[faster]
    assert all(-1e-9 <= e <= math.log(1.3) + 1e-9 for e in errors if e not in slow)
