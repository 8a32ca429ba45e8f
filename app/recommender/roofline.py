"""Specs alone: a custom workload nobody measured, from its FLOPs and bytes per sample.

The workload becomes a one-bucket profile (app/perfmodel/custom.py) and runs through the same
calibrated model as the zoo: a roofline at the efficiencies the data taught, plus a kernel and (in
eager PyTorch) a host dispatch per operator, which is what batch-1 latency is made of. A prediction
asks it of one runtime, and the model runs the step as that runtime dispatches it (a graph runtime pays
no Python per operator; names the model does not know, eager PyTorch's); a recommendation's rows are
eager PyTorch's. Its band is the one an uncalibrated model earned out of sample, labelled ``source:
model``; a GPU graph runtime's figure says what MLPerf's TensorRT runs made of such a figure, as the zoo's
does; its power is modelled from its utilisation of compute and memory, like the zoo's, not taken as the
TDP.
"""

from __future__ import annotations

from app.contracts import CustomWorkload, EstimateKind, Precision, ReasonCode, Task
from app.perfmodel.bands import as_pct
from app.perfmodel.custom import profile, typical_operators
from app.perfmodel.device import device
from app.perfmodel.model import dispatch_of, step
from app.perfmodel.params import shipped as calibration
from app.perfmodel.predict import band_of
from app.recommender.estimators.modelled import graph_uncalibrated
from app.recommender.evidence import Hardware
from app.recommender.guess import Guess
from app.recommender.power import modelled_draw
from app.recommender.reasons import Why

CUSTOM_RUNTIME = "torch-eager"


def roofline_estimate(
    hardware: Hardware,
    workload: CustomWorkload,
    precision: Precision,
    batch: int,
    task: Task = Task.infer,
    runtime: str = CUSTOM_RUNTIME,
) -> Guess | None:
    spec = hardware.spec
    dev = device(spec, precision) if spec is not None else None
    if spec is None or dev is None:
        return None
    profiled = profile(workload, precision, task)
    breakdown = step(profiled, dev, batch, calibration().of(dev.kind), runtime=runtime)
    throughput = batch / breakdown.seconds
    error_pct = as_pct(band_of(f"{dev.kind}-uncalibrated"))
    power, basis, power_reasons = modelled_draw(spec, breakdown)
    reasons = list(power_reasons)
    if dev.kind == "gpu" and dispatch_of(runtime) == "graph":
        reasons.append(graph_uncalibrated(runtime))
    return Guess(
        kind=EstimateKind.predicted,
        source="model",
        throughput_samples_per_s=throughput,
        error_pct=error_pct,
        latency_p99_ms=breakdown.seconds * 1000,
        power_w=power,
        power_basis=basis,
        why=[
            Why(
                ReasonCode.roofline,
                {
                    "flops_per_sample": workload.flops_per_sample,
                    "bytes_per_sample": workload.bytes_per_sample,
                    "precision": precision.value,
                    "runtime": runtime,
                    "operators": workload.operators or typical_operators(task),
                    "operators_given": workload.operators is not None,
                    "compute_ms": breakdown.compute_s * 1000,
                    "memory_ms": breakdown.memory_s * 1000,
                    "host_ms": breakdown.host_s * 1000,
                    "step_ms": breakdown.seconds * 1000,
                    "error_pct": error_pct,
                },
            ),
            *reasons,
        ],
        memory_gb=profiled.memory.at(batch) / 1e9,
    )
