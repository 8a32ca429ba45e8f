"""Predicted: the throughput other parts measured, transferred to this one by roofline scaling
(app/recommender/scaling.py), power from the share of TDP the references drew."""

from __future__ import annotations

import statistics

from app.contracts import DeviceKind, EstimateKind, PowerBasis, ReasonCode
from app.recommender.estimators.base import (
    Config,
    Estimator,
    EstimatorInfo,
    Evidence,
    batch_time_ms,
    config_at,
    estimators,
    tdp_power,
)
from app.recommender.evidence import LAB, REFERENCE, Hardware, Point
from app.recommender.guess import Guess
from app.recommender.interpolate import interpolate
from app.recommender.reasons import Why, power_why
from app.recommender.scaling import Reference, transfer


def _references(hardware: Hardware, config: Config, evidence: Evidence) -> list[Point]:
    """One point per other part of the same vendor and kind that ran this config (see _per_part). A
    reference run's parts speak for others through the model instead (modelled.lab_correction): one
    part cannot learn how the time splits between compute and memory, and the model's difference
    between parts is what it was validated on."""
    if config.source.startswith(REFERENCE):
        return []
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


@estimators.register
class Predicted(Estimator):
    info = EstimatorInfo(
        name="predicted",
        description="Roofline scaling from the parts that measured it, the compute/memory split learned by NNLS.",
        order=4,
    )

    @staticmethod
    def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
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
        power, basis = tdp_power(hardware)
    tails = [p.latency_p99_ms / batch_time_ms(config_at(p), p.throughput) for p in refs if p.latency_p99_ms]
    latency = batch_time_ms(config, throughput) * (statistics.median(tails) if tails else 1.0)
    names = ", ".join(sorted({p.hardware.spec.name for p in refs if p.hardware.spec}))
    split = ", ".join(f"{term} {share:.0%}" for term, share in result.split.items() if share >= 0.005)
    why = Why(
        ReasonCode.predicted,
        {
            "split": split,
            "split_from": "fit" if result.learned else "ridge_point",
            "parts": len(refs),
            "source": config.source,
            "part_names": names,
            "error_pct": result.error_pct,
        },
    )
    return Guess(
        kind=EstimateKind.predicted,
        source=config.source,
        throughput_samples_per_s=throughput,
        error_pct=result.error_pct,
        latency_p99_ms=latency,
        power_w=power,
        power_basis=basis,
        references=sorted({p.hardware.label for p in refs}),
        why=[why, *power_why(basis)],
    )
