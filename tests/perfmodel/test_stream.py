"""Eager PyTorch's stream rate is measured on the configs two parts measured (app/perfmodel/stream.py):
the measurement recovers the rate that made the ratios, reads only the ratios, not the level, and
takes no host-bound step; the shipped rate is what the reference runs measure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.contracts import Task
from app.perfmodel import stream
from app.perfmodel.bands import regime
from app.perfmodel.model import steps
from app.perfmodel.params import shipped
from tests.perfmodel.test_host import made_by, reference_points


def test_the_rate_that_made_the_ratios_is_recovered_whatever_the_level() -> None:
    unlimited = stream.with_stream(shipped().of("gpu"), 0.0)
    modelled = made_by(stream.with_stream(unlimited, 12.0))
    # every measurement 1.6x off the model, or each workload off by its own factor: the ratios stand
    for scale in (lambda p: 1.6, lambda p: 1.0 + 0.1 * len(p.config[0])):
        found = [replace(p, throughput=p.throughput * scale(p)) for p in modelled]
        rate = stream.measured(found, unlimited)
        assert rate == pytest.approx(12.0, rel=0.04)  # the grid's step is 3.5%


def test_only_configs_two_parts_of_one_architecture_measured_on_the_gpu_are_pairs() -> None:
    params = shipped().of("gpu")
    found = reference_points()
    chosen = stream.pairs(found, params)
    assert chosen
    for pair in chosen:
        assert pair.first.device.id < pair.second.device.id
        assert pair.first.batch == pair.second.batch >= 32  # batch 1 waits on the host
        # a host-bound step's ratio is the hosts': the model puts both steps on the GPU
        assert all(regime(m.host_s, m.device_s) == "device" for m in steps([pair.first, pair.second], params))
    # two architectures run other kernels: their ratio is not the memory's alone
    other = [
        replace(p, architecture="blackwell") if p.case.device.id == chosen[0].second.device.id else p for p in found
    ]
    assert stream.pairs(other, params) == []
    one_part = [p for p in found if p.case.device.id == found[0].case.device.id]
    assert stream.pairs(one_part, params) == []
    assert stream.measured(one_part, params) is None
    assert stream.fitted([], params) is None


def test_the_shipped_rate_is_what_the_runs_measure_and_each_task_predicts_the_others_ratios() -> None:
    params = shipped().of("gpu")
    assert 4.0 < params.stream < 32.0 and shipped().of("cpu").stream == 0.0
    unlimited = stream.with_stream(params, 0.0)
    found = reference_points()
    assert stream.measured(found, unlimited) == pytest.approx(params.stream, rel=0.04)
    chosen = stream.pairs(found, unlimited)
    for task in (Task.infer, Task.train):
        held = [p for p in chosen if p.config[1] is task]
        rate = stream.fitted([p for p in chosen if p.config[1] is not task], unlimited)
        assert held and rate is not None
        without = sum(map(abs, stream.ratio_errors(held, unlimited)))
        with_rate = sum(map(abs, stream.ratio_errors(held, stream.with_stream(unlimited, rate))))
        assert with_rate < 0.5 * without, task
