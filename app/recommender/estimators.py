"""The three kinds of estimate, tried in order: measured, then interpolated, then predicted.

The order is the registry's: an estimator later in the list runs only when the ones before it
had nothing, so a measurement is never replaced by an interpolation or a prediction.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.contracts import DeviceKind, EstimateKind, PowerBasis, Precision
from app.recommender.evidence import LAB, Hardware, Point
from app.recommender.guess import Guess
from app.recommender.interpolate import interpolate
from app.recommender.scaling import Reference, transfer

# Interpolated estimates: no band narrower than this, and a quarter of the gap between the two
# measured neighbours (a straight line in log batch is rarely off by more on a saturating curve).
MIN_INTERPOLATED_PCT = 5.0
GAP_SHARE = 0.25
MEASURED_FLOOR_PCT = 1.0


@dataclass(frozen=True, slots=True)
class Config:
    runtime: str
    precision: Precision
    batch_size: int
    threads: int | None
    source: str = LAB


@dataclass(slots=True)
class Evidence:
    """The points of one workload, indexed for the estimators."""

    points: list[Point]
    # A prediction depends only on the config and the target's part: a fleet of many machines with
    # the same GPU shares one (the leave-one-out behind its band is the costly step).
    predictions: dict[tuple[Config, str, DeviceKind], Guess | None] = field(default_factory=dict)
    by_config: dict[tuple[str, str, Precision], list[Point]] = field(default_factory=dict)
    references: dict[tuple[Config, DeviceKind], list[Point]] = field(default_factory=dict)
    curves: dict[tuple[str, str, str, Precision], list[Point]] = field(default_factory=dict)
    measured_keys: set[str] = field(default_factory=set)
    exact: dict[tuple[str, str, str, Precision, int | None, int | None], list[Point]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        owners: dict[str, tuple[str, ...]] = {}
        for p in self.points:
            self.by_config.setdefault((p.source, p.runtime, p.precision), []).append(p)
            key = p.hardware.key
            if key not in owners:
                self.measured_keys.add(key)
                spec = p.hardware.spec
                owners[key] = (key, f"part:{spec.id}") if spec is not None else (key,)
            batch = p.batch_size if p.source == LAB else None  # published results: at the source's batch
            for owner in owners[key]:
                self.curves.setdefault((owner, p.source, p.runtime, p.precision), []).append(p)
                self.exact.setdefault((owner, p.source, p.runtime, p.precision, batch, p.threads), []).append(p)

    @staticmethod
    def _owner(hardware: Hardware) -> str | None:
        """A lab device's points are its own; a catalog part's are those of every device of that part."""
        if hardware.ref.owned:
            return hardware.key
        return f"part:{hardware.spec.id}" if hardware.spec is not None else None

    def at(self, hardware: Hardware, config: Config) -> list[Point]:
        """The points of exactly this config on this hardware."""
        batch = config.batch_size if config.source == LAB else None
        key = (self._owner(hardware) or "", config.source, config.runtime, config.precision, batch, config.threads)
        return self.exact.get(key, [])

    def measured_on(self, hardware: Hardware) -> bool:
        return hardware.key in self.measured_keys

    def curve(self, hardware: Hardware, source: str, runtime: str, precision: Precision) -> list[Point]:
        """Every point this hardware measured with this runtime and precision (all batches and threads)."""
        return self.curves.get((self._owner(hardware) or "", source, runtime, precision), [])


Estimator = Callable[[Hardware, Config, Evidence], Guess | None]


def _median(values: list[float]) -> float:
    """statistics.median, without its overhead for the usual single value (this runs per config of every device)."""
    return values[0] if len(values) == 1 else statistics.median(values)


def _tdp_power(hardware: Hardware) -> tuple[float | None, PowerBasis | None]:
    if hardware.spec is not None and hardware.spec.tdp_w:
        return hardware.spec.tdp_w, PowerBasis.tdp
    return None, None


def _power_words(basis: PowerBasis | None) -> str:
    """How an explanation ends: where its power figure came from (nothing when it was measured)."""
    if basis is PowerBasis.measured:
        return ""
    if basis is PowerBasis.tdp:
        return "; power is the board TDP (not measured)"
    if basis is PowerBasis.transferred:
        return "; power is its TDP times the share of TDP the references drew"
    return "; power unknown: not measured, and no catalog entry with a TDP"


def _batch_time_ms(config: Config, throughput: float) -> float:
    return config.batch_size / throughput * 1000


def _source_words(source: str) -> str:
    return "the lab" if source == LAB else source


def measured(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    same = evidence.at(hardware, config)
    if not same:
        return None
    if len(same) == 1:
        return _one_measurement(hardware, config, same[0])
    throughput = _median([p.throughput for p in same])
    ci = max([p.ci_pct for p in same if p.ci_pct is not None] or [MEASURED_FLOOR_PCT])
    spread = (max(p.throughput for p in same) - min(p.throughput for p in same)) / 2 / throughput * 100
    error_pct = max(ci, spread, MEASURED_FLOOR_PCT)
    powers = [p.power_w for p in same if p.power_w is not None]
    power, basis = (_median(powers), PowerBasis.measured) if powers else _tdp_power(hardware)
    latencies = [p.latency_p99_ms for p in same if p.latency_p99_ms is not None]
    latency = _median(latencies) if latencies else _batch_time_ms(config, throughput)
    systems = sum(p.systems for p in same)
    if config.source == LAB:
        where = same[0].hardware.label if len(same) == 1 else f"{len(same)} lab devices of this part (median)"
        iterations = sum(p.iterations or 0 for p in same)
        why = f"measured on {where}: {iterations} timed iterations, 95% CI ±{error_pct:.1f}%"
    else:
        why = f"published by {config.source} at batch {same[0].batch_size}" + (
            f", median of {systems} systems (spread ±{error_pct:.1f}%)" if systems > 1 else ""
        )
    return Guess(
        kind=EstimateKind.measured,
        source=config.source,
        throughput_samples_per_s=throughput,
        error_pct=error_pct,
        latency_p99_ms=latency,
        power_w=power,
        power_basis=basis,
        explain=why + _power_words(basis),
    )


def _one_measurement(hardware: Hardware, config: Config, p: Point) -> Guess:
    """measured() for a single point, the usual case: a lab device measured this config once (this
    runs for every config of every device in the fleet, so it takes the short way)."""
    error_pct = max(p.ci_pct or 0.0, MEASURED_FLOOR_PCT)
    if p.power_w is not None:
        power: float | None = p.power_w
        basis: PowerBasis | None = PowerBasis.measured
    else:
        power, basis = _tdp_power(hardware)
    return Guess(
        kind=EstimateKind.measured,
        source=p.source,
        throughput_samples_per_s=p.throughput,
        error_pct=error_pct,
        latency_p99_ms=p.latency_p99_ms if p.latency_p99_ms is not None else _batch_time_ms(config, p.throughput),
        power_w=power,
        power_basis=basis,
        explain=lambda: _measured_words(p, error_pct) + _power_words(basis),
    )


def _measured_words(p: Point, error_pct: float) -> str:
    if p.source == LAB:
        return f"measured on {p.hardware.label}: {p.iterations or 0} timed iterations, 95% CI ±{error_pct:.1f}%"
    return f"published by {p.source} at batch {p.batch_size}"


def interpolated(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    if config.source != LAB:
        return None
    own = evidence.curve(hardware, LAB, config.runtime, config.precision)
    along_batch = [p for p in own if p.threads == config.threads]
    along_threads = [p for p in own if p.batch_size == config.batch_size and p.threads is not None]
    for axis, curve, x in (
        ("batch", along_batch, config.batch_size),
        ("threads", along_threads, config.threads),
    ):
        if x is None or len({p.hardware.key for p in curve}) != 1:
            continue
        at = interpolate([(_x(p, axis), p.throughput) for p in curve], x, monotone=axis == "batch")
        if at is None:
            continue
        neighbours = [p for p in curve if _x(p, axis) in (at.low_x, at.high_x)]
        ci = max([p.ci_pct for p in neighbours if p.ci_pct is not None] or [0.0])
        error_pct = max(MIN_INTERPOLATED_PCT, ci, GAP_SHARE * at.gap_pct)
        powered = [(_x(p, axis), p.power_w) for p in curve if p.power_w is not None]
        power_at = interpolate(powered, x, monotone=False) if len(powered) == len(curve) else None
        power, basis = (power_at.value, PowerBasis.measured) if power_at else _tdp_power(hardware)
        tails = [p.latency_p99_ms / _batch_time_ms(config_at(p), p.throughput) for p in neighbours if p.latency_p99_ms]
        latency = _batch_time_ms(config, at.value) * (max(tails) if tails else 1.0)
        return Guess(
            kind=EstimateKind.interpolated,
            source=LAB,
            throughput_samples_per_s=at.value,
            error_pct=error_pct,
            latency_p99_ms=latency,
            power_w=power,
            power_basis=basis,
            explain=(
                f"interpolated on {curve[0].hardware.label} between {axis} {at.low_x:g} and {at.high_x:g} "
                f"(measured {at.low_value:,.1f} and {at.high_value:,.1f}/s)" + _power_words(basis)
            ),
        )
    return None


def config_at(point: Point) -> Config:
    return Config(point.runtime, point.precision, point.batch_size, point.threads, point.source)


def _x(point: Point, axis: str) -> float:
    return float(point.batch_size if axis == "batch" else point.threads or 0)


def _references(hardware: Hardware, config: Config, evidence: Evidence) -> list[Point]:
    """One point per other part of the same vendor and kind that ran this config (see _per_part)."""
    key = (config, hardware.ref.kind)
    if key not in evidence.references:
        evidence.references[key] = _per_part(config, hardware.ref.kind, evidence)
    return [
        p
        for p in evidence.references[key]
        # no transfer across vendors: their software stacks (CUDA/ROCm, oneDNN/ZenDNN) differ
        if hardware.spec is None
        or (
            p.hardware.spec is not None
            and p.hardware.spec.id != hardware.spec.id
            and p.hardware.spec.vendor == hardware.spec.vendor
        )
    ]


def _per_part(config: Config, kind: DeviceKind, evidence: Evidence) -> list[Point]:
    """Each catalog part's value for this config (the median over the devices of that part): at this
    batch, measured or read off the device's curve; CPUs at the most threads they measured."""
    by_device: dict[str, list[Point]] = {}
    for p in evidence.by_config.get((config.source, config.runtime, config.precision), []):
        if p.hardware.spec is not None and p.hardware.ref.kind is kind:
            by_device.setdefault(p.hardware.key, []).append(p)
    by_part: dict[str, list[Point]] = {}
    for points in by_device.values():
        if kind is DeviceKind.cpu:
            most = max((p.threads or 0) for p in points)
            points = [p for p in points if (p.threads or 0) == most]
        elif config.source == LAB:
            points = [p for p in points if p.threads == config.threads]
        at = _at_batch(points, config.batch_size) if config.source == LAB else points[0] if points else None
        if at is not None and at.hardware.spec is not None:
            by_part.setdefault(at.hardware.spec.id, []).append(at)
    return [sorted(points, key=lambda p: p.throughput)[len(points) // 2] for points in by_part.values()]


def _at_batch(curve: list[Point], batch: int) -> Point | None:
    """The device's point at ``batch``: measured, or interpolated along its batch curve."""
    if not curve:
        return None
    exact = [p for p in curve if p.batch_size == batch]
    if exact:
        return exact[0]
    at = interpolate([(p.batch_size, p.throughput) for p in curve], batch)
    if at is None:
        return None
    powered = [(p.batch_size, p.power_w) for p in curve if p.power_w is not None]
    power = interpolate(powered, batch, monotone=False) if len(powered) == len(curve) else None
    return curve[0]._replace(
        batch_size=batch, throughput=at.value, power_w=power.value if power else None, latency_p99_ms=None
    )


def predicted(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    if hardware.spec is None:
        return None
    key = (config, hardware.spec.id, hardware.ref.kind)
    if key not in evidence.predictions:
        evidence.predictions[key] = _predicted(hardware, config, evidence)
    return evidence.predictions[key]


def _predicted(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    assert hardware.spec is not None
    refs = _references(hardware, config, evidence)
    result = transfer(
        [Reference(p.hardware.label, p.hardware.spec, p.precision, p.throughput) for p in refs if p.hardware.spec],
        hardware.spec,
        config.precision,
    )
    if result is None:
        return None
    throughput = result.throughput
    ratios = [
        p.power_w / p.hardware.spec.tdp_w for p in refs if p.power_w and p.hardware.spec and p.hardware.spec.tdp_w
    ]
    if ratios and hardware.spec.tdp_w:
        power: float | None = hardware.spec.tdp_w * min(1.0, statistics.median(ratios))
        basis: PowerBasis | None = PowerBasis.transferred
    else:
        power, basis = _tdp_power(hardware)
    tails = [p.latency_p99_ms / _batch_time_ms(config_at(p), p.throughput) for p in refs if p.latency_p99_ms]
    latency = _batch_time_ms(config, throughput) * (statistics.median(tails) if tails else 1.0)
    names = ", ".join(sorted({p.hardware.spec.name for p in refs if p.hardware.spec}))
    split = ", ".join(f"{term} {share:.0%}" for term, share in result.split.items() if share >= 0.005)
    how = "split learned from" if result.learned else "ridge-point split (too few to learn it) from"
    return Guess(
        kind=EstimateKind.predicted,
        source=config.source,
        throughput_samples_per_s=throughput,
        error_pct=result.error_pct,
        latency_p99_ms=latency,
        power_w=power,
        power_basis=basis,
        references=sorted({p.hardware.label for p in refs}),
        explain=(
            f"predicted by roofline scaling ({split}) with the {how} {len(refs)} part(s) "
            f"{_source_words(config.source)} measured: {names}; leave-one-out error ±{result.error_pct:.0f}%"
            + _power_words(basis)
        ),
    )


# The order is the rule: measured before interpolated before predicted.
ESTIMATORS: Sequence[tuple[str, Estimator]] = (
    ("measured", measured),
    ("interpolated", interpolated),
    ("predicted", predicted),
)


def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    for _name, estimator in ESTIMATORS:
        found = estimator(hardware, config, evidence)
        if found is not None:
            return found
    return None
