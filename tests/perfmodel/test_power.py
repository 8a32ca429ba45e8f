"""The power model's promises: a draw between idle and limit that rises with utilisation, energy per
sample, and a cap decided on the predicted draw that never raises throughput."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.catalog import CatalogHardware, get, load
from app.errors import InvalidInput
from app.perfmodel.power import (
    CapParams,
    PowerEstimate,
    PowerParams,
    capped_throughput,
    decide_cap,
    draw_w,
    energy_per_sample_j,
    estimate,
    limit_w,
    shipped,
)

GPUS = [e for e in load() if e.kind == "gpu" and e.tdp_w]
H100 = get("h100-sxm5-80gb")
CAP = CapParams(exponent=1 / 3, extra_error_pct=10.0)

shares = st.floats(min_value=0.0, max_value=1.0)
params = st.builds(
    PowerParams,
    idle_fraction=st.floats(min_value=0.0, max_value=0.9),
    compute_slope=st.floats(min_value=0.0, max_value=5.0),
    memory_slope=st.floats(min_value=0.0, max_value=5.0),
    band_fraction=st.floats(min_value=0.0, max_value=2.0),
)


@given(st.sampled_from(GPUS), params, shares, shares, shares, shares)
def test_the_draw_rises_with_either_utilisation(
    part: CatalogHardware, p: PowerParams, u_c: float, u_m: float, more_c: float, more_m: float
) -> None:
    low = draw_w(part, u_c * more_c, u_m * more_m, p).power_w
    assert draw_w(part, u_c, u_m, p).power_w >= low - 1e-9


@given(st.sampled_from(GPUS), params, shares, shares)
def test_the_draw_and_its_band_stay_between_idle_and_the_limit(
    part: CatalogHardware, p: PowerParams, u_c: float, u_m: float
) -> None:
    found = draw_w(part, u_c, u_m, p)
    assert found.idle_w is not None
    assert found.idle_w - 1e-9 <= found.low_w <= found.power_w <= found.high_w <= found.limit_w + 1e-9
    assert found.limit_w == limit_w(part)


def test_an_idle_device_draws_its_idle_share_and_a_busy_one_its_limit() -> None:
    p = PowerParams(idle_fraction=0.2, compute_slope=2.0, memory_slope=1.0, band_fraction=0.1)
    assert draw_w(H100, 0.0, 0.0, p).power_w == pytest.approx(140.0)
    assert draw_w(H100, 0.5, 0.0, p).power_w == pytest.approx(700.0)
    # the busier unit sets the load, not the sum: 0.3 of compute (0.6) beats 0.4 of memory (0.4)
    assert draw_w(H100, 0.3, 0.4, p).load == pytest.approx(0.6)


def test_the_limit_is_the_tdp_not_the_most_an_administrator_may_raise_it_to() -> None:
    raised = H100.model_copy(update={"tdp_w": 450.0, "power_limit_max_w": 600.0})
    assert limit_w(raised) == 450.0
    assert limit_w(H100.model_copy(update={"tdp_w": None, "power_limit_max_w": 600.0})) == 600.0
    with pytest.raises(InvalidInput, match="no tdp_w"):
        limit_w(H100.model_copy(update={"tdp_w": None, "power_limit_max_w": None}))


@pytest.mark.parametrize(("u_c", "u_m"), [(-0.1, 0.0), (0.0, 1.5), (float("nan"), 0.0)])
def test_a_utilisation_outside_0_to_1_is_refused(u_c: float, u_m: float) -> None:
    p = PowerParams(idle_fraction=0.2, compute_slope=1.0, memory_slope=1.0, band_fraction=0.1)
    with pytest.raises(InvalidInput, match="between 0 and 1"):
        draw_w(H100, u_c, u_m, p)


def test_energy_per_sample_is_power_over_throughput() -> None:
    assert energy_per_sample_j(400.0, 2000.0) == pytest.approx(0.2)
    with pytest.raises(InvalidInput):
        energy_per_sample_j(400.0, 0.0)
    with pytest.raises(InvalidInput):
        energy_per_sample_j(-1.0, 10.0)


@given(
    st.floats(min_value=0.0, max_value=1e6),
    st.floats(min_value=1.0, max_value=2000.0),
    st.floats(min_value=1.0, max_value=2000.0),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_a_cap_never_raises_throughput(throughput: float, draw: float, cap: float, k: float) -> None:
    rule = CapParams(exponent=k, extra_error_pct=0.0)
    assert capped_throughput(throughput, draw, cap, rule) <= throughput


@given(st.floats(min_value=0.0, max_value=1e6), st.floats(min_value=1.0, max_value=2000.0))
def test_a_cap_at_or_above_the_predicted_draw_changes_nothing(throughput: float, draw: float) -> None:
    assert capped_throughput(throughput, draw, draw, CAP) == throughput
    assert capped_throughput(throughput, draw, draw * 1.5, CAP) == throughput


def test_a_tighter_cap_costs_more() -> None:
    assert capped_throughput(100.0, 400.0, 300.0, CAP) > capped_throughput(100.0, 400.0, 200.0, CAP)
    assert capped_throughput(100.0, 400.0, 200.0, CAP) == pytest.approx(100 * 0.5 ** (1 / 3))


def _drawing(power_w: float) -> PowerEstimate:
    return PowerEstimate(power_w=power_w, low_w=power_w, high_w=power_w, basis="model", limit_w=700.0)


def test_a_budget_above_the_predicted_draw_needs_no_cap_whatever_the_tdp() -> None:
    # the case: an H100 (TDP 700 W) predicted at 390 W under a 400 W budget runs uncapped
    found = decide_cap(H100, _drawing(390.0), 400.0, CAP)
    assert not found.capped and found.feasible and found.throughput_factor == 1.0


def test_a_budget_below_the_predicted_draw_caps_inside_the_power_limit_range() -> None:
    found = decide_cap(H100, _drawing(600.0), 400.0, CAP)
    assert found.capped and found.feasible and found.cap_w == 400.0
    assert found.throughput_factor == pytest.approx((400 / 600) ** (1 / 3))
    assert found.extra_error_pct == 10.0


def test_a_budget_the_part_cannot_be_capped_to_is_infeasible() -> None:
    below = decide_cap(H100, _drawing(600.0), 150.0, CAP)  # H100 SXM limits go down to 200 W
    assert below.capped and not below.feasible and "200 W" in below.reason
    unknown = decide_cap(get("t4"), _drawing(70.0), 50.0, CAP)  # no datasheet range curated for the T4
    assert unknown.capped and not unknown.feasible and "power-limit range" in unknown.reason


def test_the_shipped_calibration_has_gpu_parameters_and_gives_cpus_their_tdp() -> None:
    calibration = shipped()
    assert calibration.gpu is not None and 0 < calibration.gpu.idle_fraction < 0.5
    assert 0 < calibration.cap.exponent <= 1
    cpu = next(e for e in load() if e.kind == "cpu" and e.tdp_w)
    if calibration.cpu is None:
        found = estimate(cpu, 0.5, 0.5)
        assert found.basis == "tdp" and found.power_w == cpu.tdp_w
    assert estimate(H100, 0.0, 0.0).basis == "model"
