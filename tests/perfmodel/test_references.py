"""The reference runs' errors (app/perfmodel/references.py): a result predicted from another machine's run
of its part, drawn between that run's batches, errs by what moves between them (``between_errors``); a
run's measurement standing for its part errs by how far another machine measures (``machine_errors``); a
run's ratio carried far beyond its batches errs by how the ratio moves (``beyond_errors``);
each error is told host- or device-bound by the model's step (app/perfmodel/bands.py ``regime``)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app import catalog
from app.catalog import reference
from app.contracts import Precision, Task
from app.perfmodel import bands, references
from app.perfmodel.device import device
from app.perfmodel.model import Case, steps
from app.perfmodel.params import shipped
from app.perfmodel.predict import profile_of
from tests.perfmodel.test_host import made_by

SOURCE = "reference:hwadvisor-h200-sxm-141gb"


def test_a_run_the_model_describes_up_to_a_line_in_log_batch_is_predicted_exactly_between_its_batches() -> None:
    params = shipped().of("gpu")
    # measured = modelled x a ratio that moves along a line in log(batch), the same on every machine
    found = [
        replace(p, throughput=p.throughput * math.exp(0.3 - 0.05 * math.log(p.config[3]))) for p in made_by(params)
    ]
    errors = references.between_errors(found, params)
    assert errors and max(abs(e.value) for e in errors) < 1e-9


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
    errors = [e.value for e in references.between_errors(found, params)]
    assert len(errors) == sum(inside.values())
    # the faster machine's results, drawn from the others alone, come out 1.3x too slow; the others'
    # results, drawn partly from it, too fast by at most as much
    slow = [e for e in errors if e == pytest.approx(-math.log(1.3))]
    assert len(slow) == inside[faster]
    assert all(-1e-9 <= e <= math.log(1.3) + 1e-9 for e in errors if e not in slow)


def point(
    run: str, batch: int, throughput: float, workload: str = "resnet50", precision: Precision = Precision.bf16
) -> references.Point:
    """A made-up H200 eager inference result of ``run`` (its own machine)."""
    part = catalog.get("h200-sxm-141gb")
    profile = profile_of(workload, Task.infer, precision)
    dev = device(part, precision)
    assert profile is not None and dev is not None
    config = (workload, Task.infer, precision.value, batch)
    return references.Point(SOURCE, run, "NVIDIA", config, Case(profile, dev, batch, "torch-eager"), throughput)


def test_machine_errors_are_each_machine_predicted_by_each_other_and_a_config_of_one_machine_has_none() -> None:
    params = shipped().of("gpu")
    found = [
        point("a", 1, 300.0),
        point("b", 1, 210.0),
        point("a", 256, 10_000.0),
        point("b", 256, 10_100.0),
        point("a", 32, 7_000.0),  # measured by one machine only: no error
    ]
    errors = references.machine_errors(found, params)
    assert sorted(round(e.value, 6) for e in errors) == sorted(
        round(v, 6) for v in (math.log(210 / 300), math.log(300 / 210), math.log(1.01), -math.log(1.01))
    )
    # batch 1 is the host's, batch 256 the GPU's
    regimes = {round(abs(e.value), 6): e.regime for e in errors}
    assert regimes[round(math.log(300 / 210), 6)] == "host"
    assert regimes[round(math.log(1.01), 6)] == "device"


def test_twin_errors_are_each_16_bit_result_calibrated_by_another_machines_run_at_the_other_precision() -> None:
    params = shipped().of("gpu")

    def at_ratio(run: str, b: int, ratio: float, precision: Precision) -> references.Point:
        """Machine ``run``'s result at batch ``b``, measured at ``ratio`` times the model's throughput."""
        case = point(run, b, 1.0, precision=precision).case
        return point(run, b, b / steps([case], params)[0].seconds * ratio, precision=precision)

    found = [
        at_ratio("a", 256, 1.3, Precision.fp16),
        at_ratio("b", 256, 1.0, Precision.bf16),
        at_ratio("a", 256, 1.1, Precision.bf16),  # its own machine's bf16: not another machine's
        at_ratio("b", 32, 2.0, Precision.fp16),  # no bf16 at batch 32 anywhere
        at_ratio("c", 256, 1.0, Precision.fp32),  # fp32 has no twin
    ]
    errors = references.twin_errors(found, params)
    # a's fp16 from b's bf16 ratio (1.0): 1.3x too slow; b's bf16 from a's fp16 ratio: 1.3x too fast
    assert sorted(round(e.value, 6) for e in errors) == sorted(round(v, 6) for v in (-math.log(1.3), math.log(1.3)))
    assert {e.regime for e in errors} == {"device"}
    assert references.TWINS[Precision.fp16] is Precision.bf16 and references.TWINS[Precision.bf16] is Precision.fp16


def test_beyond_errors_carry_the_runs_nearest_ratio_only_to_batches_far_beyond_its_own() -> None:
    params = shipped().of("gpu")

    def at_ratio(b: int, ratio: float) -> references.Point:
        """Machine a's result at batch ``b``, measured at ``ratio`` times the model's throughput."""
        case = point("a", b, 1.0).case
        seconds = steps([case], params)[0].seconds
        return point("a", b, b / seconds * ratio)

    found = [at_ratio(1, 1.0), at_ratio(8, 2.0), at_ratio(16, 2.0), at_ratio(64, 3.0), point("b", 1024, 5.0)]
    errors = references.beyond_errors(found, params)
    # batch 1 lies 8x below 8 and 64 lies 4x above 16: each is carried from its nearest; 8 and 16 lie
    # between or within 2x of the others; machine b's one point has no batch of its own to come from
    assert sorted(round(e.value, 6) for e in errors) == sorted(round(v, 6) for v in (math.log(2.0), -math.log(1.5)))
    assert references.beyond(1, [8]) and not references.beyond(16, [8, 32]) and not references.beyond(512, [256])


def test_every_machine_that_measured_a_config_stands_and_the_machines_differ_where_the_host_bounds_it() -> None:
    runs = reference.shipped()
    found = references.points(runs, {e.id: e for e in catalog.load()})
    # the H200's batch 1 was measured by its reference run and again on other machines, the H100's on a
    # second machine twice: each run's figure stands, one measurement of the part each
    h200_batch_1 = {p.run for p in found if p.source == SOURCE and p.config == ("resnet50", Task.infer, "fp32", 1)}
    assert len(h200_batch_1) >= 2
    for run in runs:
        assert len({p.run for p in found if p.source == run.source}) == len(run.runs)
    errors = references.machine_errors(found, shipped().of("gpu"))
    host = [abs(e.value) for e in errors if e.regime == "host"]
    device_bound = [abs(e.value) for e in errors if e.regime == "device"]
    host_band, device_band = bands.quantile(host), bands.quantile(device_bound)
    assert host_band is not None and device_band is not None and device_band < 0.1 < host_band


def test_a_step_is_host_bound_from_half_the_device_time() -> None:
    assert bands.regime(0.5, 1.0) == "host" and bands.regime(0.49, 1.0) == "device"
    assert bands.regime(2.0, 1.0) == "host" and bands.in_regime("gpu-between", "host") == "gpu-between-host"
