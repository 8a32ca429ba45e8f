"""Interpolated: read off the device's own measured curve, along batch size or thread count. A lab
device's curve asked for a catalog part stands for another machine of it: its band is at least the
machine band of the step's regime (app/recommender/estimators/machine_band.py)."""

from __future__ import annotations

from app.contracts import EstimateKind, PowerBasis, ReasonCode
from app.recommender.estimators.base import (
    Config,
    Estimator,
    EstimatorInfo,
    Evidence,
    batch_time_ms,
    config_at,
    estimators,
    held_gb,
    tdp_power,
)
from app.recommender.estimators.machine_band import machines
from app.recommender.evidence import LAB, Hardware, Point
from app.recommender.guess import Guess
from app.recommender.interpolate import interpolate
from app.recommender.reasons import Why, power_why

# No band narrower than this, and a quarter of the gap between the two measured neighbours (a
# straight line in log batch is rarely off by more on a saturating curve).
MIN_INTERPOLATED_PCT = 5.0
GAP_SHARE = 0.25


@estimators.register
class Interpolated(Estimator):
    info = EstimatorInfo(
        name="interpolated",
        description="Between two measured points of the same device's curve (batch size or threads), never beyond.",
        order=2,
    )

    @staticmethod
    def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
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
            other = machines(hardware, neighbours[0]._replace(batch_size=config.batch_size), evidence)
            error_pct = max(MIN_INTERPOLATED_PCT, ci, GAP_SHARE * at.gap_pct, other.pct if other is not None else 0.0)
            powered = [(_x(p, axis), p.power_w) for p in curve if p.power_w is not None]
            power_at = interpolate(powered, x, monotone=False) if len(powered) == len(curve) else None
            power, basis = (power_at.value, PowerBasis.measured) if power_at else tdp_power(hardware)
            tails = [
                p.latency_p99_ms / batch_time_ms(config_at(p), p.throughput) for p in neighbours if p.latency_p99_ms
            ]
            latency = batch_time_ms(config, at.value) * (max(tails) if tails else 1.0)
            why = Why(
                ReasonCode.interpolated,
                {
                    "hardware": curve[0].hardware.label,
                    "axis": axis,
                    "low_x": at.low_x,
                    "high_x": at.high_x,
                    "low_throughput": at.low_value,
                    "high_throughput": at.high_value,
                    **({"machine_pct": other.pct, "regime": other.regime} if other is not None else {}),
                },
            )
            return Guess(
                kind=EstimateKind.interpolated,
                source=LAB,
                throughput_samples_per_s=at.value,
                error_pct=error_pct,
                latency_p99_ms=latency,
                power_w=power,
                power_basis=basis,
                memory_gb=held_gb(hardware, config, evidence),
                why=[why, *power_why(basis)],
            )
        return None


def _x(point: Point, axis: str) -> float:
    return float(point.batch_size if axis == "batch" else point.threads or 0)
