"""A GPU over the power budget may run power-capped: NVML sets a limit anywhere in its allowed range.

The cap is decided on the estimate's power (modelled from utilisation, or measured), never the TDP.
Under a cap the throughput scales as (cap / draw) ** k, with k and the band's widening learned from
MLPerf's MaxQ (power-capped) and MaxP submissions of the same parts (app/perfmodel/power.py,
data/power.json). It is a prediction, labelled so, never a measurement.
"""

from __future__ import annotations

from app.catalog import CatalogHardware
from app.contracts import DeviceKind, EstimateKind, PowerBasis, ReasonCode
from app.perfmodel import power as power_model
from app.perfmodel.model import Breakdown
from app.recommender.evidence import Hardware
from app.recommender.guess import Guess
from app.recommender.reasons import Why, power_why


def modelled_draw(
    spec: CatalogHardware, breakdown: Breakdown, speedup: float = 1.0
) -> tuple[float | None, PowerBasis | None, list[Why]]:
    """A modelled config's board power from its utilisation of compute and memory (app/perfmodel/power.py),
    the TDP where the model has no calibration for the kind, nothing where the catalog gives no limit;
    with the reason that says which.

    ``speedup`` is the calibration's factor on the model's throughput (a lab's or a reference run's
    measured / modelled, a published stack's): a figure calibrated to run that many times the model's
    does that much more work per second, so its units are that much busier. The power model was fitted
    on achieved utilisation (MLPerf's measured rates over the peak, app/perfmodel/mlperf_power.py), which
    is the calibrated figure's, not the uncalibrated step's (benchmarks/power_check.py)."""
    if not (spec.tdp_w or spec.power_limit_max_w):
        return None, None, power_why(None)
    compute = min(1.0, breakdown.utilisation_compute * speedup)
    memory = min(1.0, breakdown.utilisation_memory * speedup)
    drawn = power_model.estimate(spec, compute, memory)
    if drawn.basis == "tdp":
        return drawn.power_w, PowerBasis.tdp, power_why(PowerBasis.tdp)
    figures = {"compute_util": compute, "memory_util": memory, "power_w": drawn.power_w}
    return drawn.power_w, PowerBasis.modelled, [Why(ReasonCode.power_modelled, figures)]


def power_range(hardware: Hardware) -> tuple[float, float] | None:
    spec = hardware.spec
    if hardware.ref.kind is not DeviceKind.cuda or spec is None or not spec.power_limit_min_w:
        return None
    return spec.power_limit_min_w, spec.power_limit_max_w or spec.tdp_w or spec.power_limit_min_w


def capped(hardware: Hardware, estimate: Guess, budget_w: float) -> Guess | None:
    """The estimate with the GPU capped at ``budget_w``; None if it cannot be capped that low."""
    limits = power_range(hardware)
    if limits is None or estimate.power_w is None or not limits[0] <= budget_w < estimate.power_w:
        return None
    uncapped_w = estimate.power_w
    cap = power_model.shipped().cap
    factor = power_model.capped_throughput(1.0, uncapped_w, budget_w, cap)
    throughput = estimate.throughput_samples_per_s * factor
    error_pct = estimate.error_pct + cap.extra_error_pct
    return Guess(
        kind=EstimateKind.predicted,
        source=estimate.source,
        throughput_samples_per_s=throughput,
        error_pct=error_pct,
        latency_p99_ms=estimate.latency_p99_ms / factor if estimate.latency_p99_ms else None,
        power_w=budget_w,
        power_basis=PowerBasis.capped,
        power_cap_w=budget_w,
        references=estimate.references,
        memory_gb=estimate.memory_gb,  # a cap changes the clock, not what the config holds
        why=lambda: [
            Why(
                ReasonCode.power_capped,
                {
                    "cap_w": budget_w,
                    "min_w": limits[0],
                    "max_w": limits[1],
                    "uncapped_w": uncapped_w,
                    "factor": factor,
                },
            ),
            *estimate.reasons,
        ],
    )
