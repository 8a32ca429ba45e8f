"""Measured: this config was measured on this hardware (the lab's device, or a part someone published).

A reference run's figure stands for its part, not for the machine it ran on, and so does a lab's figure
asked for a catalog part (another machine of it, which the lab would buy): its band is at least how far
another machine with that part measured the same config (the ``machine`` band of the step's regime,
app/perfmodel/bands.py), about 2x where the host bounds the step, a few percent where the GPU does. A
lab device's own figure keeps its own interval.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.contracts import EstimateKind, PowerBasis, ReasonCode
from app.perfmodel.predict import prime
from app.recommender.estimators.base import (
    Config,
    Estimator,
    EstimatorInfo,
    Evidence,
    batch_time_ms,
    estimators,
    held_gb,
    median,
    tdp_power,
)
from app.recommender.estimators.machine_band import Machines, for_another, machines, step
from app.recommender.evidence import LAB, Hardware, Point
from app.recommender.guess import Guess
from app.recommender.reasons import Why, power_why

MEASURED_FLOOR_PCT = 1.0
FEW_ITERATIONS = 3
FEW_ITERATIONS_PCT = 10.0
"""A lab result timed fewer than three times has no confidence interval worth the name: its band is
at least this wide (a repeat of one timed step on a shared machine moves by several percent, and on
this project's CI machines by up to 40%), never the 0-1% a CI of one or two samples would claim."""


def floor_pct(p: Point) -> float:
    """The narrowest band one measured point may carry: wider when it was timed only once or twice."""
    if p.source == LAB and p.iterations is not None and p.iterations < FEW_ITERATIONS:
        return FEW_ITERATIONS_PCT
    return MEASURED_FLOOR_PCT


@estimators.register
class Measured(Estimator):
    info = EstimatorInfo(
        name="measured",
        description="The config was measured on this hardware: the median of its measurements, their 95% CI.",
        order=1,
    )

    @staticmethod
    def prepare(pairs: Sequence[tuple[Hardware, Config]], evidence: Evidence) -> None:
        """Model every step a machine band is asked for in one array evaluation (a fleet's catalog parts
        answer many configs from the lab's devices)."""
        if evidence.workload:
            asks = (
                ask
                for h, c in pairs
                if for_another(h, c.source) and (same := evidence.at(h, c)) and (ask := step(h, same[0])) is not None
            )
            prime(evidence.workload, evidence.task, asks)

    @staticmethod
    def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
        same = evidence.at(hardware, config)
        if not same:
            return None
        other = machines(hardware, same[0], evidence) if evidence.workload else None
        if len(same) == 1:
            return _one_measurement(hardware, config, same[0], other, held_gb(hardware, config, evidence))
        throughput = median([p.throughput for p in same])
        ci = max([p.ci_pct for p in same if p.ci_pct is not None] or [MEASURED_FLOOR_PCT])
        spread = (max(p.throughput for p in same) - min(p.throughput for p in same)) / 2 / throughput * 100
        measured_pct = max(ci, spread, *(floor_pct(p) for p in same))
        error_pct = max(measured_pct, other.pct if other is not None else 0.0)
        powers = [p.power_w for p in same if p.power_w is not None]
        power, basis = (median(powers), PowerBasis.measured) if powers else tdp_power(hardware)
        latencies = [p.latency_p99_ms for p in same if p.latency_p99_ms is not None]
        latency = median(latencies) if latencies else batch_time_ms(config, throughput)
        if config.source == LAB:
            figures = {"devices": len(same), "iterations": sum(p.iterations or 0 for p in same)}
            why = Why(ReasonCode.measured_lab_median, _with_machines({**figures, "error_pct": measured_pct}, other))
        else:
            why = _published(config.source, same[0].batch_size, sum(p.systems for p in same), error_pct, other)
        return Guess(
            kind=EstimateKind.measured,
            source=config.source,
            throughput_samples_per_s=throughput,
            error_pct=error_pct,
            latency_p99_ms=latency,
            power_w=power,
            power_basis=basis,
            memory_gb=held_gb(hardware, config, evidence),
            why=[why, *power_why(basis)],
        )


def _one_measurement(
    hardware: Hardware, config: Config, p: Point, other: Machines | None, memory_gb: float | None
) -> Guess:
    """The usual case, a single point (this runs for every config of every device in the fleet, so it
    takes the short way and leaves its reasons unmade until an answer lists it)."""
    measured_pct = max(p.ci_pct or 0.0, floor_pct(p))
    error_pct = max(measured_pct, other.pct if other is not None else 0.0)
    if p.power_w is not None:
        power: float | None = p.power_w
        basis: PowerBasis | None = PowerBasis.measured
    else:
        power, basis = tdp_power(hardware)
    return Guess(
        kind=EstimateKind.measured,
        source=p.source,
        throughput_samples_per_s=p.throughput,
        error_pct=error_pct,
        latency_p99_ms=p.latency_p99_ms if p.latency_p99_ms is not None else batch_time_ms(config, p.throughput),
        power_w=power,
        power_basis=basis,
        memory_gb=memory_gb,
        why=lambda: [_point_why(p, measured_pct, other), *power_why(basis)],
    )


def _point_why(p: Point, error_pct: float, other: Machines | None) -> Why:
    if p.source == LAB:
        figures = {"hardware": p.hardware.label, "iterations": p.iterations or 0, "error_pct": error_pct}
        if p.threads is not None:
            figures["threads"] = p.threads
        return Why(ReasonCode.measured_lab, _with_machines(figures, other))
    return _published(p.source, p.batch_size, p.systems, error_pct, other)


def _published(source: str, batch: int, systems: int, error_pct: float, other: Machines | None) -> Why:
    figures = {"source": source, "batch_size": batch, "systems": systems, "error_pct": error_pct}
    return Why(ReasonCode.measured_public, _with_machines(figures, other))


def _with_machines(figures: dict[str, object], other: Machines | None) -> dict[str, object]:
    """The reason's figures, and how far another machine of the part measures where that widened the band."""
    return figures if other is None else {**figures, "machine_pct": other.pct, "regime": other.regime}
