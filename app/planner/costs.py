"""What a plan costs: owning the devices over a period, one training job, and renting instead.

    purchase  = devices x price + systems x system_usd
    energy    = system power x running hours x $/kWh,   running hours = period x utilisation
    hosting   = $/kW-year x system power in kW x period years
    total     = purchase + energy + hosting
    cloud     = devices x $/device-hour x running hours

A training job's owned cost is its energy plus the purchase and hosting spread over the period's
running hours, for the hours the job takes; rented, it is the job's hours at the cloud rate.
System power is the devices' (from the estimate: measured, modelled or capped); the hosts' own draw
is not counted, and is listed as an assumption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.contracts import CostBreakdown, CostPoint, Costs, JobCost

HOURS_PER_YEAR = 365.25 * 24
MAX_POINTS = 121
"""Cost-over-time points: one a month up to ten years, then evenly spaced."""


def _finite(usd: float | None) -> float | None:
    """A figure the answer can state: None where the inputs' product left the floats (a request's extreme
    but valid rates and hours), as a figure without a price is None, never an infinite dollar amount."""
    return usd if usd is None or math.isfinite(usd) else None


@dataclass(frozen=True, slots=True)
class Bill:
    period_years: float
    running_hours: float
    purchase_usd: float | None
    energy_kwh: float | None
    energy_usd: float | None
    hosting_usd: float | None
    cloud_usd_per_hour: float | None

    @property
    def total_usd(self) -> float | None:
        if self.purchase_usd is None or self.energy_usd is None or self.hosting_usd is None:
            return None
        return self.purchase_usd + self.energy_usd + self.hosting_usd

    @property
    def cloud_usd(self) -> float | None:
        return None if self.cloud_usd_per_hour is None else self.cloud_usd_per_hour * self.running_hours

    def to_contract(self) -> CostBreakdown:
        return CostBreakdown(
            period_years=self.period_years,
            running_hours=self.running_hours,
            purchase_usd=_finite(self.purchase_usd),
            energy_kwh=_finite(self.energy_kwh),
            energy_usd=_finite(self.energy_usd),
            hosting_usd=_finite(self.hosting_usd),
            total_usd=_finite(self.total_usd),
            cloud_usd_per_hour=_finite(self.cloud_usd_per_hour),
            cloud_usd=_finite(self.cloud_usd),
        )


def bill(
    costs: Costs,
    *,
    devices: int,
    systems: int,
    price_usd: float | None,
    system_power_w: float | None,
    cloud_usd_per_device_hour: float | None,
) -> Bill:
    running = costs.period_years * HOURS_PER_YEAR * costs.utilisation
    kw = None if system_power_w is None else system_power_w / 1000
    energy_kwh = None if kw is None else kw * running
    return Bill(
        period_years=costs.period_years,
        running_hours=running,
        purchase_usd=None if price_usd is None else devices * price_usd + systems * costs.system_usd,
        energy_kwh=energy_kwh,
        energy_usd=None if energy_kwh is None else energy_kwh * costs.electricity_usd_per_kwh,
        hosting_usd=None if kw is None else costs.hosting_usd_per_kw_year * kw * costs.period_years,
        cloud_usd_per_hour=None if cloud_usd_per_device_hour is None else devices * cloud_usd_per_device_hour,
    )


def job_cost(owned: Bill, costs: Costs, hours: float, system_power_w: float | None) -> JobCost:
    energy_kwh = None if system_power_w is None else system_power_w / 1000 * hours
    energy_usd = None if energy_kwh is None else energy_kwh * costs.electricity_usd_per_kwh
    share = hours / owned.running_hours
    owned_usd = (
        None
        if energy_usd is None or owned.purchase_usd is None or owned.hosting_usd is None
        else energy_usd + (owned.purchase_usd + owned.hosting_usd) * share
    )
    return JobCost(
        time_to_train_hours=hours,
        energy_kwh=_finite(energy_kwh),
        energy_usd=_finite(energy_usd),
        owned_usd=_finite(owned_usd),
        cloud_usd=None if owned.cloud_usd_per_hour is None else _finite(owned.cloud_usd_per_hour * hours),
    )


def over_time(owned: Bill) -> list[CostPoint]:
    """Cumulative cost by month: the purchase on day one, energy and hosting accruing evenly; renting
    accrues its hourly rate over the same running hours."""
    months = owned.period_years * 12
    count = min(MAX_POINTS, math.floor(months) + 1)
    steps = [months * i / (count - 1) for i in range(count)] if count > 1 else [0.0]
    if steps[-1] < months:
        steps.append(months)
    running = None if owned.energy_usd is None or owned.hosting_usd is None else owned.energy_usd + owned.hosting_usd
    cloud = owned.cloud_usd
    return [
        CostPoint(
            month=m,
            owned_usd=None
            if owned.purchase_usd is None or running is None
            else _finite(owned.purchase_usd + running * m / months),
            cloud_usd=None if cloud is None else _finite(cloud * m / months),
        )
        for m in steps
    ]
