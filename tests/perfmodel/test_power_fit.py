"""The fit finds the parameters that made the data: readings generated from known parameters (with a
little noise) come back as those parameters, and held-out errors and bands behave as stated."""

from __future__ import annotations

import numpy as np
import pytest

from app.catalog import get
from app.perfmodel.power_fit import (
    CapPair,
    HeldOut,
    Observation,
    band,
    cap_errors,
    cap_exponent,
    coverage,
    fit,
    fit_baseline,
    leave_one_part_out,
)

PARTS = [get(i) for i in ("h100-sxm5-80gb", "a100-sxm4-80gb", "l40s", "rtx-4090", "a10", "l4")]
IDLE, A, B = 0.15, 1.6, 0.9
HOST_BASE, HOST_PER_TDP, PSU = 120.0, 0.8, 0.94


def _draw(tdp: float, u_c: float, u_m: float, idle: float = IDLE, a: float = A, b: float = B) -> float:
    return idle * tdp + (1 - idle) * tdp * min(1.0, max(a * u_c, b * u_m))


def _devices(rng: np.random.Generator, noise: float, per_part: int = 12) -> list[Observation]:
    found = []
    for part in PARTS:
        assert part.tdp_w
        for n in range(per_part):
            u_c, u_m = rng.uniform(0, 0.7), rng.uniform(0, 0.9)
            watts = _draw(part.tdp_w, u_c, u_m) * (1 + rng.normal(0, noise))
            found.append(Observation(part, u_c, watts, memory_util=u_m, label=f"{part.id} {n}"))
    return found


def test_device_readings_give_back_the_idle_share_and_both_slopes() -> None:
    found = fit(_devices(np.random.default_rng(1), noise=0.01))
    assert not found.memory_tied
    assert found.idle_fraction == pytest.approx(IDLE, abs=0.01)
    assert found.compute_slope == pytest.approx(A, rel=0.05)
    assert found.memory_slope == pytest.approx(B, rel=0.05)
    assert found.host_base_w == 0.0 and found.factors == {}


def test_without_memory_readings_the_memory_slope_is_tied_to_compute() -> None:
    rng = np.random.default_rng(2)
    readings = [
        Observation(part, u, _draw(part.tdp_w or 0.0, u, 0.0), label=part.id)
        for part in PARTS
        for u in rng.uniform(0, 0.5, 6)
    ]
    found = fit(readings)
    assert found.memory_tied and found.memory_slope == found.compute_slope
    assert found.compute_slope == pytest.approx(A, rel=0.01)
    assert found.idle_fraction == pytest.approx(IDLE, abs=0.005)


def test_whole_systems_give_back_the_host_and_a_factor_on_their_utilisation() -> None:
    """Systems at the wall, some with utilisation counted 1/0.45 too high (BERT's padding), plus two
    devices' idle readings: the host, the device parameters and the factor all come back."""
    rng = np.random.default_rng(3)
    factor = 0.45
    readings = []
    for part in PARTS:
        assert part.tdp_w
        for system in range(4):
            devices = int(rng.choice([1, 2, 4, 8]))
            # hosts no bigger than half their devices' TDP: a small GPU in a big host is not readable
            cpu = min(float(rng.choice([150.0, 280.0, 560.0, 700.0])), devices * part.tdp_w / 2)
            for padded in (False, True):
                true_u = rng.uniform(0.1, 0.55)
                watts = (HOST_BASE + HOST_PER_TDP * cpu + devices * _draw(part.tdp_w, true_u, 0.0)) / PSU
                readings.append(
                    Observation(
                        part,
                        true_u / factor if padded else true_u,
                        watts * (1 + rng.normal(0, 0.005)),
                        devices=devices,
                        host_cpu_tdp_w=cpu,
                        factors=("padded",) if padded else (),
                        label=f"{part.id} system {system}",
                    )
                )
    for part in PARTS[:2]:
        readings.append(Observation(part, 0.0, IDLE * (part.tdp_w or 0.0), memory_util=0.0, label=f"{part.id} idle"))
    found = fit(readings, psu_efficiency=PSU)
    assert found.idle_fraction == pytest.approx(IDLE, abs=0.02)
    assert found.compute_slope == pytest.approx(A, rel=0.05)
    assert found.factors["padded"] == pytest.approx(factor, rel=0.05)
    assert found.host_base_w == pytest.approx(HOST_BASE, abs=40)
    assert found.host_per_cpu_tdp == pytest.approx(HOST_PER_TDP, rel=0.1)
    held = leave_one_part_out(readings, evaluate=lambda o: o.system)
    assert {h.observation.part for h in held} == {p.id for p in PARTS}
    assert np.mean([abs(h.error) for h in held]) < 0.02 and max(abs(h.error) for h in held) < 0.1
    assert np.mean([abs(h.baseline_error) for h in held]) > 0.2  # TDP is far off at these loads


def test_the_baseline_puts_every_device_at_its_tdp() -> None:
    part = PARTS[1]
    reading = Observation(part, 0.3, 200.0, label="a100")
    assert fit_baseline([reading]).device_draw_w(reading) == part.tdp_w


def test_a_part_is_predicted_by_a_fit_that_never_saw_it() -> None:
    readings = _devices(np.random.default_rng(4), noise=0.0, per_part=4)
    outlier = Observation(PARTS[0], 0.2, 3 * _draw(PARTS[0].tdp_w or 0.0, 0.2, 0.0), memory_util=0.0, label="odd")
    held = leave_one_part_out([*readings, outlier])
    odd = next(h for h in held if h.observation is outlier)
    assert odd.error == pytest.approx(2.0, rel=0.05)  # no fit that saw it bent toward it
    assert all(abs(h.error) < 0.2 for h in held if h.observation is not outlier)


def _held(part: str, error: float) -> HeldOut:
    reading = Observation(get(part), 0.5, 100.0)
    return HeldOut(
        reading, predicted_w=100.0, measured_w=100.0 * (1 + error), baseline_w=100.0, baseline_measured_w=100.0
    )


def test_a_band_holds_the_quantile_of_errors_rounding_up() -> None:
    errors = [0.01 * n for n in range(1, 11)]
    assert band(errors, 0.9) == pytest.approx(0.09)
    assert band([-0.5, 0.1], 0.9) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        band([])


def test_coverage_judges_each_part_by_a_band_made_without_it() -> None:
    held = [_held("l4", 0.05), _held("l4", 0.06), _held("a10", 0.05), _held("t4", 0.5)]
    # l4 rows against a band from a10 and t4 (0.5): in; a10 against l4 and t4 (0.5): in; t4 against 0.06: out
    assert coverage(held, 0.9) == pytest.approx(3 / 4)


def test_the_cap_exponent_comes_back_from_capped_pairs() -> None:
    rng = np.random.default_rng(5)
    ratios = rng.uniform(0.4, 0.95, 20)
    pairs = [CapPair(r, r**0.35 * (1 + rng.normal(0, 0.01)), group=f"s{n % 5}") for n, r in enumerate(ratios)]
    assert cap_exponent(pairs) == pytest.approx(0.35, abs=0.03)
    assert max(abs(e) for e in cap_errors(pairs)) < 0.05
    assert all(e < 0 for e in cap_errors(pairs, 0.0))  # "no loss" over-promises every pair
    with pytest.raises(ValueError):
        CapPair(1.2, 1.0, group="x")
