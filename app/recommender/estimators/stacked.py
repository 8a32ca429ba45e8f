"""Stacked: a runtime this device never ran, from its own eager fp32 measurement times the runtime's
stack factor, measured side by side with eager fp32 on the lab's other devices of its kind
(app/perfmodel/stacks.py). Tried last: it speaks where nothing else can, such as a virtual CPU the
catalog cannot name, which the model has no specs for."""

from __future__ import annotations

from app.contracts import EstimateKind, Precision, ReasonCode
from app.perfmodel.stacks import BASELINE_PRECISION, BASELINE_RUNTIME, Measurement, StackFactor, stack_factors, without
from app.recommender.estimators.base import (
    Config,
    Estimator,
    EstimatorInfo,
    Evidence,
    batch_time_ms,
    estimators,
    tdp_power,
)
from app.recommender.evidence import LAB, Hardware, Point
from app.recommender.guess import Guess
from app.recommender.reasons import Why, power_why

MIN_STACKED_PCT = 75.0
"""No band narrower: a stack's gain moves with the device's ISA, not only the runtime. Leave one CPU out
on OpenVINO's published int8/fp32 pairs (benchmarks/stack_accuracy.py), the factor of the other CPUs
missed by 71% (BERT-base) and 81% (ResNet-50) at the 90th percentile, the AMX Xeons' int8 gains most
of all (median 18% and 32%; fp32 unchanged: 152% and 258%)."""


@estimators.register
class Stacked(Estimator):
    info = EstimatorInfo(
        name="stacked",
        description="This device's eager fp32 measurement times the runtime's stack factor, measured beside eager "
        "fp32 on the lab's other devices of its kind.",
        order=5,
    )

    @staticmethod
    def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
        if config.source != LAB or evidence.variant is not None:
            return None
        if (config.runtime, config.precision) == (BASELINE_RUNTIME, BASELINE_PRECISION):
            return None
        base = _baseline(hardware, config, evidence)
        if base is None:
            return None
        factor = _factors(hardware, evidence).get((config.runtime, config.precision, hardware.ref.kind.value))
        if factor is None:
            return None
        throughput = base.throughput * factor.factor
        error_pct = max(MIN_STACKED_PCT, factor.spread_pct, base.ci_pct or 0.0)
        power, basis = tdp_power(hardware)
        why = Why(
            ReasonCode.runtime_stack,
            {
                "hardware": hardware.label,
                "runtime": config.runtime,
                "precision": config.precision.value,
                "base_throughput": base.throughput,
                "batch_size": base.batch_size,
                "factor": factor.factor,
                "devices": len(factor.devices),
                "pairs": factor.pairs,
                "error_pct": error_pct,
            },
        )
        return Guess(
            kind=EstimateKind.predicted,
            source=LAB,
            throughput_samples_per_s=throughput,
            error_pct=error_pct,
            latency_p99_ms=batch_time_ms(config, throughput),
            power_w=power,
            power_basis=basis,
            why=[why, *power_why(basis)],
            references=list(factor.devices),
        )


def _baseline(hardware: Hardware, config: Config, evidence: Evidence) -> Point | None:
    """This device's own eager fp32 point at the batch: at the config's threads, else at the most it ran."""
    own = [
        p
        for p in evidence.curve(hardware, LAB, BASELINE_RUNTIME, BASELINE_PRECISION)
        if p.batch_size == config.batch_size and p.hardware.key == hardware.key
    ]
    same = [p for p in own if p.threads == config.threads]
    return (same or sorted(own, key=lambda p: p.threads or 0))[-1] if own else None


def _factors(hardware: Hardware, evidence: Evidence) -> dict[tuple[str, Precision, str], StackFactor]:
    if hardware.key not in evidence.stacks:
        measured = [
            Measurement(
                p.hardware.key, p.hardware.ref.kind.value, p.runtime, p.precision, p.batch_size, p.threads, p.throughput
            )
            for p in evidence.points
            if p.source == LAB
        ]
        evidence.stacks[hardware.key] = stack_factors(without(measured, hardware.key))
    found: dict[tuple[str, Precision, str], StackFactor] = evidence.stacks[hardware.key]
    return found
