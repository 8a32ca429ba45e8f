"""Learning the power model's parameters from measured power, and how well they predict held-out parts.

An observation is a measured power with the utilisation of the devices that drew it. Two kinds:

- a device's own draw (NVML for a GPU, RAPL for a CPU package): ``watts`` is one device;
- a whole system at the wall (MLPerf Power): ``watts`` is ``devices`` identical devices and their
  host, through the power supply: ``watts * psu_efficiency = host + devices * draw`` with
  ``host = host_base_w + host_per_cpu_tdp * host_cpu_tdp_w`` (the CPUs' TDP summed over sockets; the
  base is memory, fans, drives, NICs). The two host numbers are learned with the device's.

The device model is app/perfmodel/power.py's ``I + (L - I) min(1, max(a u_c, b u_m))``, ``I = i TDP``.
Given ``i`` it is linear in the rest (a, b, the host numbers) once each observation is assigned to
its busier unit and to the slope or the limit: solved by non-negative least squares on relative
residuals (each observation's error as a share of its watts), the assignment redone until it settles.

Some observations' compute utilisation is known only up to a factor in (0, 1], learned too and
shared by every observation that names it in ``factors``: MLPerf's BERT FLOPs count sequences padded
to 384 tokens, which TensorRT does not compute; a MaxQ submission runs its GPUs at lowered clocks
and voltage, so the same utilisation draws less (dynamic power ~ u V^2). A factor only serves to read
its observations; the parameters the product uses (``PowerParams``) carry none.

``i`` and the factors are searched (a coarse grid, then golden sections one at a time), the linear
rest solved at each point. Memory utilisation: where fewer than three observations measured it (or
it hardly varies), ``b`` is tied to ``a`` (a memory-bound step is taken to draw what a compute-bound
one at the same share of its peak does), and the fit says so (``memory_tied``).

The accuracy held out (leave one part out) gives the band: the quantile of absolute relative
errors, aimed at holding the truth 90% of the time, and its coverage measured the same way (each
part's band from the other parts' errors). Pure numpy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from app.catalog import CatalogHardware
from app.perfmodel.nnls import nnls
from app.perfmodel.power import PowerParams, idle_w, limit_w

Array = NDArray[np.float64]
PSU_EFFICIENCY = 0.94
"""Wall to DC: 80 PLUS Platinum at half load (Titanium parts reach 0.96). An assumption, not a
measurement: at 0.96 the devices' draws would read about 2% higher."""
IDLE_RANGE = (0.0, 0.6)
FACTOR_RANGE = (0.05, 1.0)


@dataclass(frozen=True, slots=True)
class Observation:
    hardware: CatalogHardware
    compute_util: float
    watts: float
    memory_util: float | None = None
    """None: not measured (its memory power is then carried by the compute slope)."""
    devices: int = 1
    host_cpu_tdp_w: float | None = None
    """Set for a whole-system reading: the TDP of the host's CPUs, summed over sockets."""
    factors: tuple[str, ...] = ()
    """Learned factors in (0, 1] its compute utilisation is known only up to."""
    label: str = ""

    def __post_init__(self) -> None:
        if not self.watts > 0 or self.devices < 1 or not self.compute_util >= 0:
            raise ValueError(f"observation {self.label!r}: needs watts > 0, devices >= 1, utilisation >= 0")
        if self.memory_util is not None and not self.memory_util >= 0:
            raise ValueError(f"observation {self.label!r}: memory utilisation must be >= 0")
        if self.host_cpu_tdp_w is not None and not self.host_cpu_tdp_w >= 0:
            raise ValueError(f"observation {self.label!r}: host CPU TDP must be >= 0")

    @property
    def system(self) -> bool:
        return self.host_cpu_tdp_w is not None

    @property
    def part(self) -> str:
        """What leave-one-out holds out together: the catalog part."""
        return self.hardware.id


@dataclass(frozen=True, slots=True)
class Fit:
    idle_fraction: float
    compute_slope: float
    memory_slope: float
    memory_tied: bool
    factors: dict[str, float]
    host_base_w: float
    host_per_cpu_tdp: float
    psu_efficiency: float
    loss: float
    """Sum of squared relative residuals over the observations fitted."""
    observations: int
    fixed_load: float | None = None
    """Set for the naive baseline: every device at this load (1.0: at its limit, the TDP)."""

    def utilisation(self, o: Observation) -> float:
        return o.compute_util * math.prod(self.factors.get(f, 1.0) for f in o.factors)

    def load(self, o: Observation) -> float:
        if self.fixed_load is not None:
            return self.fixed_load
        return min(1.0, max(self.compute_slope * self.utilisation(o), self.memory_slope * (o.memory_util or 0.0)))

    def idle_w(self, o: Observation) -> float:
        """The device's floor (app/perfmodel/power.py ``idle_w``)."""
        return idle_w(o.hardware, self.idle_fraction)

    def device_draw_w(self, o: Observation, load: float | None = None) -> float:
        """The device's draw at ``load`` (the model's own, ``load(o)``, where None): between its floor and its
        limit."""
        idle = self.idle_w(o)
        return idle + (limit_w(o.hardware) - idle) * (self.load(o) if load is None else load)

    def host_w(self, o: Observation) -> float:
        return self.host_base_w + self.host_per_cpu_tdp * (o.host_cpu_tdp_w or 0.0)

    def predicted_w(self, o: Observation) -> float:
        """What the observation measured, as predicted: a device's draw, or its system at the wall."""
        if not o.system:
            return self.device_draw_w(o)
        return (self.host_w(o) + o.devices * self.device_draw_w(o)) / self.psu_efficiency

    def measured_device_w(self, o: Observation) -> float:
        """The device's draw the observation implies: its reading, or its system's less this fit's host."""
        if not o.system:
            return o.watts
        return (o.watts * self.psu_efficiency - self.host_w(o)) / o.devices

    def params(self, band_fraction: float, band_quantile: float) -> PowerParams:
        return PowerParams(
            idle_fraction=self.idle_fraction,
            compute_slope=self.compute_slope,
            memory_slope=self.memory_slope,
            band_fraction=band_fraction,
            band_quantile=band_quantile,
        )


@dataclass(slots=True)
class _Data:
    """The observations as arrays, and which columns the linear part has."""

    tdp: Array
    limit: Array
    compute: Array
    memory: Array
    devices: Array
    cpu_tdp: Array
    system: NDArray[np.bool_]
    watts: Array
    factor_names: list[str]
    uses: NDArray[np.bool_]
    """observations x factors: which factors each observation's utilisation carries."""
    tied: bool
    host: bool
    measured: Array = field(init=False)
    weight: Array = field(init=False)

    @classmethod
    def of(cls, observations: Sequence[Observation], tied: bool, psu: float) -> _Data:
        names = sorted({f for o in observations for f in o.factors})
        data = cls(
            tdp=np.array([o.hardware.tdp_w or limit_w(o.hardware) for o in observations]),
            limit=np.array([limit_w(o.hardware) for o in observations]),
            compute=np.array([o.compute_util for o in observations]),
            memory=np.array([o.memory_util or 0.0 for o in observations]),
            devices=np.array([float(o.devices) if o.system else 1.0 for o in observations]),
            cpu_tdp=np.array([o.host_cpu_tdp_w or 0.0 for o in observations]),
            system=np.array([o.system for o in observations]),
            watts=np.array([o.watts for o in observations]),
            factor_names=names,
            uses=np.array([[f in o.factors for f in names] for o in observations], dtype=bool).reshape(
                len(observations), len(names)
            ),
            tied=tied,
            host=any(o.system for o in observations),
        )
        data.measured = np.where(data.system, data.watts * psu, data.watts)
        data.weight = 1.0 / data.measured
        return data

    def utilisation(self, factors: Array) -> Array:
        scale = np.where(self.uses, factors[None, :], 1.0).prod(axis=1) if self.factor_names else 1.0
        return self.compute * scale

    def solve(self, idle_fraction: float, factors: Array) -> tuple[Array, float]:
        """The linear part's best values at this idle share and these factors, and the loss. Each
        observation is assigned to its busier unit and to its slope or the limit, the assignment
        redone from the solution until it settles (the fit is exact for a settled assignment)."""
        u = self.utilisation(factors)
        idle = np.minimum(idle_fraction * self.tdp, self.limit)
        span = self.limit - idle
        columns = (1 if self.tied else 2) + (2 if self.host else 0)
        saturated = np.zeros(len(u), dtype=bool)
        memory_bound = self.memory > u
        x = np.zeros(columns)
        seen: set[bytes] = set()
        for _ in range(2 * len(u) + 2):
            active = np.where(saturated, 0.0, span) * self.devices
            a = np.zeros((len(u), columns))
            if self.tied:
                a[:, 0] = active * np.maximum(u, self.memory)
            else:
                a[:, 0] = active * np.where(memory_bound, 0.0, u)
                a[:, 1] = active * np.where(memory_bound, self.memory, 0.0)
            if self.host:
                a[:, -2] = self.system
                a[:, -1] = self.cpu_tdp * self.system
            target = self.measured - np.where(saturated, self.limit, idle) * self.devices
            x = nnls(a * self.weight[:, None], target * self.weight)
            compute_load = x[0] * u
            memory_load = x[0] * self.memory if self.tied else x[1] * self.memory
            load = np.maximum(compute_load, memory_load)
            state = (load > 1.0, memory_load > compute_load)
            key = state[0].tobytes() + state[1].tobytes()
            if ((state[0] == saturated).all() and (state[1] == memory_bound).all()) or key in seen:
                break
            seen.add(key)
            saturated, memory_bound = state
        residual = (a @ x - target) * self.weight
        return x, float(residual @ residual)


def _golden(f: Callable[[float], float], low: float, high: float, steps: int = 24) -> float:
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return c if fc <= fd else d


def _memory_measured(observations: Sequence[Observation]) -> bool:
    measured = [o.memory_util for o in observations if o.memory_util is not None]
    return len(measured) >= 3 and max(measured) - min(measured) > 0.05


def fit(
    observations: Sequence[Observation],
    *,
    psu_efficiency: float = PSU_EFFICIENCY,
    tie_memory: bool | None = None,
    idle_range: tuple[float, float] = IDLE_RANGE,
) -> Fit:
    """The parameters that best predict ``observations`` (see the module docstring)."""
    if not observations:
        raise ValueError("no observations to fit the power model to")
    kinds = {o.hardware.kind for o in observations}
    if len(kinds) != 1:
        raise ValueError(f"one device kind per fit, not {sorted(kinds)}: fit GPUs and CPUs apart")
    tied = not _memory_measured(observations) if tie_memory is None else tie_memory
    data = _Data.of(observations, tied, psu_efficiency)
    k = len(data.factor_names)

    def loss(point: Array) -> float:
        return data.solve(float(point[0]), point[1:])[1]

    idle_grid = np.linspace(*idle_range, 25)
    factor_grid = np.linspace(FACTOR_RANGE[0], FACTOR_RANGE[1], 11)
    point = min(
        (np.array([i, *fs]) for i in idle_grid for fs in itertools.product(factor_grid, repeat=k)),
        key=loss,
    )
    steps = [idle_grid[1] - idle_grid[0], *([factor_grid[1] - factor_grid[0]] * k)]
    bounds = [idle_range, *([FACTOR_RANGE] * k)]
    for _ in range(3):
        before = loss(point)
        for axis, ((low, high), step) in enumerate(zip(bounds, steps, strict=True)):

            def along(value: float, axis: int = axis) -> float:
                moved = point.copy()
                moved[axis] = value
                return loss(moved)

            best = _golden(along, max(low, point[axis] - step), min(high, point[axis] + step))
            if along(best) < loss(point):
                point[axis] = best
        if before - loss(point) < 1e-9:
            break
    x, _ = data.solve(float(point[0]), point[1:])
    result = Fit(
        idle_fraction=float(point[0]),
        compute_slope=float(x[0]),
        memory_slope=float(x[0] if tied else x[1]),
        memory_tied=tied,
        factors={name: float(v) for name, v in zip(data.factor_names, point[1:], strict=True)},
        host_base_w=float(x[-2]) if data.host else 0.0,
        host_per_cpu_tdp=float(x[-1]) if data.host else 0.0,
        psu_efficiency=psu_efficiency,
        loss=0.0,
        observations=len(observations),
    )
    return _with_loss(result, observations)


def fit_baseline(observations: Sequence[Observation], *, psu_efficiency: float = PSU_EFFICIENCY) -> Fit:
    """The naive model: every device at its TDP (its default limit), the host learned as in ``fit``."""
    if not observations:
        raise ValueError("no observations to fit the baseline to")
    data = _Data.of(observations, True, psu_efficiency)
    host = np.zeros(2)
    if data.host:
        a = np.stack([data.system.astype(float), data.cpu_tdp * data.system], axis=1)
        host = nnls(a * data.weight[:, None], (data.measured - data.limit * data.devices) * data.weight)
    result = Fit(
        idle_fraction=0.0,
        compute_slope=0.0,
        memory_slope=0.0,
        memory_tied=True,
        factors={},
        host_base_w=float(host[0]),
        host_per_cpu_tdp=float(host[1]),
        psu_efficiency=psu_efficiency,
        loss=0.0,
        observations=len(observations),
        fixed_load=1.0,
    )
    return _with_loss(result, observations)


def _with_loss(result: Fit, observations: Sequence[Observation]) -> Fit:
    residuals = np.array([(result.predicted_w(o) - o.watts) / o.watts for o in observations])
    return Fit(**{**{n: getattr(result, n) for n in Fit.__dataclass_fields__}, "loss": float(residuals @ residuals)})


@dataclass(frozen=True, slots=True)
class HeldOut:
    """One observation predicted by fits that never saw its part."""

    observation: Observation
    predicted_w: float
    """The device's predicted draw."""
    measured_w: float
    """The device's draw the observation implies (a system's wall power less the model's host)."""
    baseline_w: float
    """The naive prediction: the part's TDP (its default limit)."""
    baseline_measured_w: float
    """The device's draw the observation implies by the baseline's own host."""

    @property
    def error(self) -> float:
        """(measured - predicted) / predicted."""
        return (self.measured_w - self.predicted_w) / self.predicted_w

    @property
    def baseline_error(self) -> float:
        return (self.baseline_measured_w - self.baseline_w) / self.baseline_w


def leave_one_part_out(
    observations: Sequence[Observation],
    *,
    evaluate: Callable[[Observation], bool] = lambda o: True,
    fitter: Callable[[Sequence[Observation]], Fit] = fit,
) -> list[HeldOut]:
    """Each part's observations (those ``evaluate`` keeps) predicted from fits to every other part's:
    the model's and the baseline's. An observation with a factor no other part has is skipped."""
    found: list[HeldOut] = []
    for part in sorted({o.part for o in observations if evaluate(o)}):
        rest = [o for o in observations if o.part != part]
        known = {f for o in rest for f in o.factors}
        held = [o for o in observations if o.part == part and evaluate(o) and set(o.factors) <= known]
        if not held or not rest:
            continue
        model, naive = fitter(rest), fit_baseline(rest)
        for o in held:
            found.append(
                HeldOut(
                    o,
                    model.device_draw_w(o),
                    model.measured_device_w(o),
                    limit_w(o.hardware),
                    naive.measured_device_w(o),
                )
            )
    return found


def band(errors: Sequence[float], quantile: float = 0.9) -> float:
    """The half-width, as a share of the prediction, that holds ``quantile`` of these errors: the
    smallest absolute error that at least that share of them is within (never interpolated down)."""
    if not errors:
        raise ValueError("no held-out errors to make a band from")
    return float(np.quantile(np.abs(np.asarray(errors, dtype=float)), quantile, method="inverted_cdf"))


def coverage(held: Sequence[HeldOut], quantile: float = 0.9, *, baseline: bool = False) -> float:
    """How often a part's truth falls in a band made from the other parts' held-out errors."""
    inside = []

    def error(h: HeldOut) -> float:
        return h.baseline_error if baseline else h.error

    for part in sorted({h.observation.part for h in held}):
        others = [error(h) for h in held if h.observation.part != part]
        if not others:
            continue
        width = band(others, quantile)
        inside += [abs(error(h)) <= width for h in held if h.observation.part == part]
    if not inside:
        raise ValueError("coverage needs held-out errors from at least two parts")
    return float(np.mean(inside))


@dataclass(frozen=True, slots=True)
class CapPair:
    """A part run capped and uncapped on the same work: its draw and throughput, capped over uncapped."""

    power_ratio: float
    throughput_ratio: float
    group: str
    """What leave-one-out holds out together (the capped submission)."""
    label: str = ""

    def __post_init__(self) -> None:
        if not 0 < self.power_ratio < 1 or not self.throughput_ratio > 0:
            raise ValueError(f"cap pair {self.label!r}: needs 0 < power ratio < 1 and throughput ratio > 0")


def cap_exponent(pairs: Sequence[CapPair]) -> float:
    """``k`` of ``throughput ratio = power ratio ** k`` by least squares on logarithms, within [0, 1]."""
    if not pairs:
        raise ValueError("no capped/uncapped pairs to learn the cap exponent from")
    x = np.log([p.power_ratio for p in pairs])
    y = np.log([p.throughput_ratio for p in pairs])
    return float(np.clip(x @ y / (x @ x), 0.0, 1.0))


def cap_errors(pairs: Sequence[CapPair], exponent: float | None = None) -> list[float]:
    """Relative errors of the capped throughput each pair's rule predicts: with ``exponent`` when
    given, else with the exponent learned from the other groups' pairs (held out)."""
    errors = []
    for group in sorted({p.group for p in pairs}):
        rest = [p for p in pairs if p.group != group]
        if exponent is None and not rest:
            continue
        k = exponent if exponent is not None else cap_exponent(rest)
        errors += [p.throughput_ratio / p.power_ratio**k - 1 for p in pairs if p.group == group]
    return errors
