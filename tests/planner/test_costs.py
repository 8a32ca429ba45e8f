"""The cost arithmetic, on the worked example in docs/PLANNING.md."""

from __future__ import annotations

import pytest

from app.contracts import Costs
from app.planner.costs import bill, job_cost, over_time

EXAMPLE = Costs(
    period_years=3,
    electricity_usd_per_kwh=0.15,
    utilisation=0.5,
    hosting_usd_per_kw_year=1_000,
    system_usd=20_000,
    cloud_usd_per_device_hour={"h100-sxm5-80gb": 2.5},
)


def test_the_worked_example_in_the_docs() -> None:
    """4 GPUs at $30,000 in one $20,000 system, drawing 700 W each, half of 3 years."""
    owned = bill(EXAMPLE, devices=4, systems=1, price_usd=30_000, system_power_w=2_800, cloud_usd_per_device_hour=2.5)
    assert owned.running_hours == pytest.approx(13_149)  # 3 x 8,766 h x 0.5
    assert owned.purchase_usd == 140_000  # 4 x 30,000 + 20,000
    assert owned.energy_kwh == pytest.approx(36_817.2)  # 2.8 kW x 13,149 h
    assert owned.energy_usd == pytest.approx(5_522.58)  # x $0.15
    assert owned.hosting_usd == pytest.approx(8_400)  # $1,000 x 2.8 kW x 3 years
    assert owned.total_usd == pytest.approx(153_922.58)
    assert owned.cloud_usd_per_hour == 10  # 4 x $2.50
    assert owned.cloud_usd == pytest.approx(131_490)  # 10 x 13,149 h

    job = job_cost(owned, EXAMPLE, hours=20, system_power_w=2_800)
    assert job.energy_kwh == pytest.approx(56)  # 2.8 kW x 20 h
    assert job.energy_usd == pytest.approx(8.4)
    assert job.owned_usd == pytest.approx(8.4 + (140_000 + 8_400) * 20 / 13_149)  # 234.11
    assert job.cloud_usd == 200

    points = over_time(owned)
    assert [p.month for p in points] == list(range(37))
    assert points[0].owned_usd == 140_000 and points[0].cloud_usd == 0
    assert points[-1].owned_usd == pytest.approx(153_922.58) and points[-1].cloud_usd == pytest.approx(131_490)
    assert points[18].owned_usd == pytest.approx(140_000 + (5_522.58 + 8_400) / 2)


def test_an_unknown_price_or_power_leaves_the_total_unknown_not_zero() -> None:
    unpriced = bill(EXAMPLE, devices=2, systems=1, price_usd=None, system_power_w=600, cloud_usd_per_device_hour=None)
    assert unpriced.purchase_usd is None and unpriced.total_usd is None and unpriced.energy_usd is not None
    assert unpriced.cloud_usd is None
    assert all(p.owned_usd is None for p in over_time(unpriced))
    unpowered = bill(EXAMPLE, devices=2, systems=1, price_usd=1_000, system_power_w=None, cloud_usd_per_device_hour=1)
    assert unpowered.energy_kwh is None and unpowered.total_usd is None
    assert job_cost(unpowered, EXAMPLE, hours=5, system_power_w=None).owned_usd is None


def test_a_bill_beyond_the_floats_is_no_figure_not_an_infinite_one() -> None:
    costs = Costs(utilisation=0.001, period_years=0.1)
    owned = bill(costs, devices=1, systems=1, price_usd=1e300, system_power_w=1e3, cloud_usd_per_device_hour=1e5)
    job = job_cost(owned, costs, hours=1e306, system_power_w=1e300)
    assert job.owned_usd is None and job.energy_kwh is None and job.cloud_usd is None
    assert owned.to_contract().total_usd is not None
