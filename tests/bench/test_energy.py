from __future__ import annotations

import time

import pytest

from app.bench.energy import Metered, meter_for
from app.bench.energy.estimate import EstimateMeter
from app.bench.energy.nvml import reading
from app.bench.energy.rapl import counter_delta
from app.contracts import PowerSource
from testkit.factories import h100_spec
from tests.bench.test_measure import spin
from tests.bench.test_runtimes import machine

pytestmark = pytest.mark.alone  # times this machine's CPU: run apart from the other tests


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


def _ticks(watts: float, period_s: float, seconds: float, *, lag_s: float = 0.03) -> list[tuple[float, int]]:
    """The counter as read over a region: its value at the start, then each step it takes."""
    ticks = [(0.0, 1_000_000)]
    t = lag_s
    while t <= seconds:
        ticks.append((t, 1_000_000 + round(watts * t * 1000)))
        t += period_s
    return ticks


def test_the_gpu_counter_gives_the_energy_between_its_steps_when_they_span_the_region() -> None:
    result = reading(_ticks(300.0, 0.1, 1.0), [250.0] * 100, seconds=1.0)
    assert result.source is PowerSource.nvml
    assert result.mean_power_w == pytest.approx(300.0, rel=0.01)
    assert result.note and "counter" in result.note and "sampled" not in result.note


def test_a_counter_that_steps_too_seldom_for_the_region_gives_way_to_sampled_power_never_to_zero() -> None:
    """An H200 steps its counter every 100 ms: regions of a few milliseconds had read 0 J, or 3,514 W."""
    for ticks in (_ticks(700.0, 5.0, 1.5), _ticks(700.0, 1.0, 1.5, lag_s=0.6)):
        result = reading(ticks, [640.0, 660.0], seconds=1.5)
        assert result.mean_power_w == pytest.approx(650.0)
        assert result.note and "sampled" in result.note and "too few" in result.note
