from __future__ import annotations

import time

import pytest

from app.bench.energy import Metered, meter_for
from app.bench.energy.estimate import EstimateMeter
from app.bench.energy.rapl import counter_delta
from app.contracts import PowerSource
from testkit.factories import h100_spec
from tests.bench.test_measure import spin
from tests.bench.test_runtimes import machine


def test_rapl_counter_wrap_is_handled() -> None:
    assert counter_delta(100, 250, max_value=1000) == 150
    assert counter_delta(900, 50, max_value=1000) == 151


def test_estimate_is_tdp_times_the_share_of_cpus_this_process_kept_busy() -> None:
    meter = EstimateMeter(tdp_w=100.0, logical_cpus=2, note="test")
    with Metered(meter) as region:
        spin(400)  # one core busy for 0.4 s
    reading = region.reading
    assert reading.source is PowerSource.estimate
    assert reading.mean_power_w == pytest.approx(50.0, rel=0.15)


def test_too_short_a_region_gives_no_figure_rather_than_zero() -> None:
    meter = EstimateMeter(tdp_w=100.0, logical_cpus=2, note="test")
    with Metered(meter) as region:
        time.sleep(0.01)
    assert region.reading.joules is None and region.reading.source is PowerSource.none


def test_this_machine_without_rapl_gets_a_labelled_estimate() -> None:
    spec = machine()
    meter = meter_for("cpu", spec)
    if spec.power_sensors.rapl_readable:
        assert meter.source is PowerSource.rapl
    else:
        assert isinstance(meter, EstimateMeter) and meter.note.startswith("estimate")
        assert meter.tdp_w > 0


def test_gpu_meter_needs_nvml_to_describe_the_device() -> None:
    spec = h100_spec().model_copy(update={"devices": h100_spec().devices[:1]})
    assert meter_for("cuda:0", spec).source is PowerSource.none
