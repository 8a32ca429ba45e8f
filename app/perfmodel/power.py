"""How much power a device draws running a config, and what a power cap costs in throughput.

The draw of one device running a step with compute utilisation ``u_c`` (achieved FLOP/s over the
peak of the math units used) and memory utilisation ``u_m`` (achieved bytes/s over the memory
bandwidth) is

    P = I + (L - I) * min(1, max(a * u_c, b * u_m)),    I = i * TDP

between an idle floor ``I`` and the limit ``L`` the part holds itself to at its default settings (its
TDP; ``power_limit_max_w`` only where the TDP is unknown: that is the most an administrator may raise
the limit to, not what a config draws at defaults). Dynamic power is taken as linear in how busy the
busier unit is (power ~ activity x f V^2 at the fixed clocks of an uncapped GPU), and a busy enough
device meets its limit, where the firmware holds it. The busier unit, not the sum: the calibration
data measured compute utilisation only, in runs whose memory traffic is part of what they drew, so a
sum would count memory twice; and a step of the performance model is bound, operator by operator, by
one unit or the other. Three numbers per device kind, shared by every part of that kind, make the
model: ``i``, ``a`` and ``b`` (``PowerParams``); none is tuned to one part. They are learned by
app/perfmodel/power_fit.py from measured power (scripts/calibrate_power.py writes
app/perfmodel/data/power.json, which says from what data and how well they predict it).

Under a budget below the predicted draw, the part is capped at the budget and its throughput scales
as ``(cap / draw) ** k`` (``CapParams``), ``k`` learned from MLPerf's MaxQ (energy-tuned, power-capped)
and MaxP submissions of the same part. At or above the predicted draw there is no cap: a budget is
compared with what the config is predicted to draw, never with the TDP.

Assumptions: idle is one share of TDP for every part of a kind; a memory-bound step draws what a
compute-bound one at the same share of its peak does (``b = a``) until measurements with memory
utilisation tell them apart (a step that is half one, half the other is then under-predicted); the
band is a quantile of the model's out-of-sample relative errors (each part predicted by a fit that
never saw it), clipped to [idle, limit]. A kind nothing calibrated (CPUs until the lab has RAPL
readings with utilisations) is given its TDP, labelled so (basis ``tdp``), with no band.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.catalog import CatalogHardware
from app.errors import InvalidInput

Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Kind = Literal["gpu", "cpu"]


class PowerParams(BaseModel):
    """The draw model of one device kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    idle_fraction: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
    """``i``: the floor a device running a config draws with its units idle, as a share of its TDP."""
    compute_slope: NonNegative
    """``a``: share of the range between idle and limit per unit of compute utilisation."""
    memory_slope: NonNegative
    """``b``: the same per unit of memory utilisation."""
    band_fraction: NonNegative
    """Half-width of the band around a draw, as a share of it (a quantile of out-of-sample errors)."""
    band_quantile: Fraction = 0.9


class CapParams(BaseModel):
    """Throughput under a power cap below the draw: ``throughput * (cap / draw) ** exponent``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exponent: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    extra_error_pct: NonNegative
    """Added to a capped estimate's error band, in percent of its throughput."""


class PowerCalibration(BaseModel):
    """What scripts/calibrate_power.py writes: the parameters per kind, the cap rule, and how they were made."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generated_by: Literal["scripts/calibrate_power.py"] = "scripts/calibrate_power.py"
    gpu: PowerParams | None
    cpu: PowerParams | None
    cap: CapParams
    provenance: dict[str, object] = Field(default_factory=dict)

    def params(self, kind: Kind) -> PowerParams | None:
        return self.gpu if kind == "gpu" else self.cpu


class PowerEstimate(BaseModel):
    """A device's predicted draw running one config, with its band."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    power_w: NonNegative
    low_w: NonNegative
    high_w: NonNegative
    basis: Literal["model", "tdp"]
    """``model``: the utilisation model; ``tdp``: the board TDP, for a kind nothing calibrated."""
    idle_w: NonNegative | None = None
    limit_w: Positive
    load: Fraction | None = None
    """``min(1, max(a u_c, b u_m))``: how far between idle and limit the draw is."""


class CapDecision(BaseModel):
    """What a power budget does to one device running one config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    capped: bool
    """The predicted draw is over the budget, so the device must be capped to keep it."""
    feasible: bool
    """The device can run within the budget: uncapped, or capped inside its power-limit range."""
    cap_w: Positive | None = None
    throughput_factor: Fraction = 1.0
    extra_error_pct: NonNegative = 0.0
    reason: str


def limit_w(hardware: CatalogHardware) -> float:
    """The power a part holds itself to at its default settings: its TDP (else the maximum limit)."""
    limit = hardware.tdp_w or hardware.power_limit_max_w
    if not limit:
        raise InvalidInput(
            f"catalog entry {hardware.id!r} has no tdp_w nor power_limit_max_w: its power cannot be predicted",
            hint="add the board power to app/catalog/curated/ (then scripts/build_catalog.py) or as a lab entry",
        )
    if hardware.power_limit_max_w:
        limit = min(limit, hardware.power_limit_max_w)
    return limit


def idle_w(hardware: CatalogHardware, idle_fraction: float) -> float:
    """The floor ``I``: the idle share of the part's TDP (of its limit where the TDP is unknown), no higher
    than its limit."""
    limit = limit_w(hardware)
    return min(idle_fraction * (hardware.tdp_w or limit), limit)


def _utilisation(name: str, value: float) -> float:
    if not 0 <= value <= 1:
        raise InvalidInput(f"{name} utilisation must be between 0 and 1, not {value!r}")
    return value


def draw_w(hardware: CatalogHardware, compute_util: float, memory_util: float, params: PowerParams) -> PowerEstimate:
    """The draw of ``hardware`` at these utilisations (each 0..1), with its band."""
    u_c = _utilisation("compute", compute_util)
    u_m = _utilisation("memory", memory_util)
    limit = limit_w(hardware)
    idle = idle_w(hardware, params.idle_fraction)
    load = min(1.0, max(params.compute_slope * u_c, params.memory_slope * u_m))
    power = idle + (limit - idle) * load
    half = params.band_fraction * power
    return PowerEstimate(
        power_w=power,
        low_w=max(idle, power - half),
        high_w=min(limit, power + half),
        basis="model",
        idle_w=idle,
        limit_w=limit,
        load=load,
    )


def tdp_estimate(hardware: CatalogHardware) -> PowerEstimate:
    """The naive figure: the part's TDP, for a kind the model has no calibration for."""
    limit = limit_w(hardware)
    return PowerEstimate(power_w=limit, low_w=limit, high_w=limit, basis="tdp", limit_w=limit)


def estimate(
    hardware: CatalogHardware,
    compute_util: float,
    memory_util: float,
    calibration: PowerCalibration | None = None,
) -> PowerEstimate:
    """``draw_w`` with the shipped calibration of the hardware's kind; the TDP where there is none."""
    params = (calibration or shipped()).params(hardware.kind)
    if params is None:
        return tdp_estimate(hardware)
    return draw_w(hardware, compute_util, memory_util, params)


def energy_per_sample_j(power_w: float, throughput_samples_per_s: float) -> float:
    """Joules per sample: the draw over the throughput."""
    if not power_w >= 0 or not throughput_samples_per_s > 0:
        raise InvalidInput(
            f"energy per sample needs a power >= 0 W and a throughput > 0/s, not {power_w!r} W and "
            f"{throughput_samples_per_s!r}/s"
        )
    return power_w / throughput_samples_per_s


def capped_throughput(throughput: float, draw_w: float, cap_w: float, params: CapParams) -> float:
    """The throughput with the device held to ``cap_w``: unchanged when the cap is at or above the draw."""
    if not throughput >= 0 or not draw_w > 0 or not cap_w > 0:
        raise InvalidInput(f"need throughput >= 0, draw > 0 W and cap > 0 W, not {throughput!r}, {draw_w!r}, {cap_w!r}")
    if cap_w >= draw_w:
        return throughput
    return throughput * float((cap_w / draw_w) ** params.exponent)


def decide_cap(
    hardware: CatalogHardware, draw: PowerEstimate, budget_w: float, params: CapParams | None = None
) -> CapDecision:
    """Whether a device predicted to draw ``draw`` must be capped to keep within ``budget_w`` per device,
    whether it can be, and what that costs. Uses the predicted draw, never the TDP: a budget at or
    above the predicted draw needs no cap. A cap needs the part's power-limit range
    (``power_limit_min_w``): below it, or with no range known, the part cannot be offered capped."""
    if not budget_w > 0:
        raise InvalidInput(f"a power budget must be > 0 W, not {budget_w!r}")
    cap = params or shipped().cap
    if draw.power_w <= budget_w:
        return CapDecision(
            capped=False, feasible=True, reason=f"predicted draw {draw.power_w:.0f} W is within {budget_w:.0f} W"
        )
    low = hardware.power_limit_min_w
    if low is None:
        return CapDecision(
            capped=True,
            feasible=False,
            reason=f"predicted draw {draw.power_w:.0f} W is over {budget_w:.0f} W and the catalog gives no "
            f"power-limit range for {hardware.id} to cap it in",
        )
    if budget_w < low:
        return CapDecision(
            capped=True,
            feasible=False,
            reason=f"predicted draw {draw.power_w:.0f} W is over {budget_w:.0f} W, below the lowest limit "
            f"{hardware.id} accepts ({low:.0f} W)",
        )
    factor = capped_throughput(1.0, draw.power_w, budget_w, cap)
    return CapDecision(
        capped=True,
        feasible=True,
        cap_w=budget_w,
        throughput_factor=factor,
        extra_error_pct=cap.extra_error_pct,
        reason=f"capped at {budget_w:.0f} W from a predicted {draw.power_w:.0f} W: throughput x {factor:.2f}",
    )


@lru_cache(maxsize=1)
def shipped() -> PowerCalibration:
    """The calibration shipped with the package (app/perfmodel/data/power.json)."""
    path = resources.files("app.perfmodel").joinpath("data/power.json")
    if not path.is_file():
        raise InvalidInput("app/perfmodel/data/power.json is missing", hint="run scripts/calibrate_power.py to make it")
    return PowerCalibration.model_validate(json.loads(path.read_text(encoding="utf-8")))
