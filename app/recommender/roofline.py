"""Specs alone: a custom workload nobody measured, from its FLOPs and bytes per sample.

Time per sample = FLOPs / (efficiency x peak) + bytes / (efficiency x bandwidth). The efficiencies are
what well-tuned kernels commonly reach (half the math peak, 70% of the bandwidth); with nothing
measured the band is wide (±50%) and says so.
"""

from __future__ import annotations

import math

from app.contracts import CustomWorkload, EstimateKind, PowerBasis, Precision, ReasonCode
from app.recommender.evidence import Hardware
from app.recommender.guess import Guess
from app.recommender.reasons import Why, power_why
from app.recommender.scaling import peak_field

COMPUTE_EFFICIENCY = 0.5
MEMORY_EFFICIENCY = 0.7
ROOFLINE_ERROR_PCT = 50.0


def roofline_estimate(hardware: Hardware, workload: CustomWorkload, precision: Precision, batch: int) -> Guess | None:
    spec = hardware.spec
    if spec is None:
        return None
    peak = getattr(spec, peak_field(precision))
    if not peak or not spec.memory_bandwidth_gb_s:
        return None
    seconds = workload.flops_per_sample / (COMPUTE_EFFICIENCY * peak * 1e12) + workload.bytes_per_sample / (
        MEMORY_EFFICIENCY * spec.memory_bandwidth_gb_s * 1e9
    )
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    throughput = 1.0 / seconds
    power = spec.tdp_w
    return Guess(
        kind=EstimateKind.predicted,
        source="model",
        throughput_samples_per_s=throughput,
        error_pct=ROOFLINE_ERROR_PCT,
        latency_p99_ms=batch * seconds * 1000,
        power_w=power,
        power_basis=PowerBasis.tdp if power else None,
        why=[
            Why(
                ReasonCode.roofline,
                {
                    "flops_per_sample": workload.flops_per_sample,
                    "bytes_per_sample": workload.bytes_per_sample,
                    "precision": precision.value,
                    "peak": peak,
                    "compute_efficiency": COMPUTE_EFFICIENCY,
                    "memory_bandwidth_gb_s": spec.memory_bandwidth_gb_s,
                    "memory_efficiency": MEMORY_EFFICIENCY,
                },
            ),
            *power_why(PowerBasis.tdp if power else None),
        ],
    )
