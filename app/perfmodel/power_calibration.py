"""From measured power to app/perfmodel/data/power.json: which data, which fit, how accurate.

GPUs learn from three sources, each an ``Observation`` (app/perfmodel/power_fit.py):

- MLPerf Inference Power pairs (app/perfmodel/mlperf_power.py): whole systems at the wall, the GPUs
  read through a learned host; MaxQ submissions carry a learned factor on their utilisation, BERT
  one for its padding, so both inform the host, the idle share and the slope;
- idle readings of real GPUs (``nvidia-smi -q`` in P0, app/perfmodel/readings.py): the floor;
- hwadvisor's GPU reference runs (app/perfmodel/reference_readings.py): every settled model result
  whose board power NVML read, at the utilisation of the throughput it measured; they alone measure
  memory utilisation, so the memory slope is learned apart from the compute one;
- the lab's readings with their utilisations (a CSV, ``readings.observations_csv``), GPUs or CPUs.

The band is the ``quantile`` of the absolute relative errors of uncapped predictions of parts held
out (each part's MaxP rows and device readings predicted by a fit to every other part): the kind of
estimate the product makes. MaxQ rows are held out too and reported, not used for the band (their
caps vary by submission). A kind with readings from fewer than two parts gets no parameters (its
estimates are its TDP). The cap exponent comes from MaxQ/MaxP pairs of the same part, its extra
error from the pairs of each MaxQ submission predicted by an exponent learned from the others'.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.perfmodel import mlperf_power
from app.perfmodel.power import CapParams, PowerCalibration, PowerParams
from app.perfmodel.power_fit import (
    CapPair,
    Fit,
    HeldOut,
    Observation,
    band,
    cap_errors,
    cap_exponent,
    coverage,
    fit,
    leave_one_part_out,
)

QUANTILE = 0.9


@dataclass(slots=True)
class Inputs:
    observations: list[Observation]
    mlperf: list[mlperf_power.Pair]
    skipped: Counter[str] = field(default_factory=Counter)
    sources: list[str] = field(default_factory=list)


def gather(
    datasets: Path,
    idle_readings: Sequence[Observation] = (),
    extra: Sequence[Observation] = (),
    *,
    references: Sequence[Observation] = (),
    device_share: float = mlperf_power.DEVICE_SHARE,
) -> Inputs:
    """MLPerf's usable pairs (those whose accelerators can be read off the wall), with the readings:
    idle ones, the reference runs' (``references``) and the lab's (``extra``)."""
    loaded = mlperf_power.load(datasets)
    inputs = Inputs(observations=[], mlperf=[], skipped=Counter(loaded.skipped))
    for pair in loaded.pairs:
        o = mlperf_power.observation(pair)
        if o is None:
            inputs.skipped[f"no int8 peak in the catalog for {pair.catalog_id}"] += 1
        elif not mlperf_power.readable(pair, device_share):
            inputs.skipped[f"accelerators under {device_share:g}x the host CPUs' TDP: not readable off the wall"] += 1
        else:
            inputs.observations.append(o)
            inputs.mlperf.append(pair)
    inputs.observations += [*idle_readings, *references, *extra]
    parts = sorted({o.part for o in references})
    inputs.sources = [
        "../shared/datasets/mlperf-power (MLPerf Inference Power v1.0-v4.1 via the MLPerf Power paper artifact)",
        "../shared/datasets/codecarbon-cpu/cpu_power.csv (host CPU TDPs)",
        *sorted({o.label for o in idle_readings}),
        *(
            [f"hwadvisor's GPU reference runs (app/catalog/data/reference): {len(references)} NVML readings on {parts}"]
            if references
            else []
        ),
        *([f"{len(extra)} lab readings"] if extra else []),
    ]
    return inputs


def uncapped(o: Observation) -> bool:
    return "maxq" not in o.factors


@dataclass(slots=True)
class Accuracy:
    held: list[HeldOut]
    """Uncapped predictions of held-out parts: the band's errors."""
    held_maxq: list[HeldOut]
    band_fraction: float
    baseline_band_fraction: float
    coverage: float
    baseline_coverage: float

    def summary(self, rows: Sequence[HeldOut] | None = None) -> dict[str, float]:
        rows = self.held if rows is None else rows
        errors = np.array([h.error for h in rows])
        naive = np.array([h.baseline_error for h in rows])
        return {
            "rows": float(len(rows)),
            "parts": float(len({h.observation.part for h in rows})),
            "mean_abs_error_pct": float(100 * np.mean(np.abs(errors))),
            "mean_abs_error_w": float(np.mean([abs(h.measured_w - h.predicted_w) for h in rows])),
            "baseline_mean_abs_error_pct": float(100 * np.mean(np.abs(naive))),
            "baseline_mean_abs_error_w": float(np.mean([abs(h.baseline_measured_w - h.baseline_w) for h in rows])),
        }


def accuracy(observations: Sequence[Observation], quantile: float = QUANTILE) -> Accuracy:
    held = leave_one_part_out(observations, evaluate=uncapped)
    held_maxq = leave_one_part_out(observations, evaluate=lambda o: not uncapped(o))
    return Accuracy(
        held=held,
        held_maxq=held_maxq,
        band_fraction=band([h.error for h in held], quantile),
        baseline_band_fraction=band([h.baseline_error for h in held], quantile),
        coverage=coverage(held, quantile),
        baseline_coverage=coverage(held, quantile, baseline=True),
    )


@dataclass(slots=True)
class CapFit:
    pairs: list[CapPair]
    exponent: float
    errors: list[float]
    """Held out: each MaxQ submission's pairs by the exponent learned from the others'."""
    extra_error_pct: float


def cap_fit(pairs: Sequence[CapPair], quantile: float = QUANTILE) -> CapFit:
    errors = cap_errors(pairs)
    return CapFit(
        pairs=list(pairs),
        exponent=cap_exponent(pairs),
        errors=errors,
        extra_error_pct=100 * band(errors, quantile),
    )


@dataclass(slots=True)
class Calibration:
    gpu: Fit
    gpu_accuracy: Accuracy
    cap: CapFit
    cpu: Fit | None
    cpu_accuracy: Accuracy | None
    result: PowerCalibration


def _params(f: Fit, a: Accuracy, quantile: float) -> PowerParams:
    return f.params(band_fraction=a.band_fraction, band_quantile=quantile)


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def calibrate(inputs: Inputs, quantile: float = QUANTILE) -> Calibration:
    gpus = [o for o in inputs.observations if o.hardware.kind == "gpu"]
    cpus = [o for o in inputs.observations if o.hardware.kind == "cpu"]
    gpu = fit(gpus)
    gpu_accuracy = accuracy(gpus, quantile)
    cap = cap_fit(mlperf_power.cap_pairs(inputs.mlperf, gpu), quantile)
    cpu = fit(cpus) if len({o.part for o in cpus}) >= 2 else None
    cpu_accuracy = accuracy(cpus, quantile) if cpu is not None else None
    provenance = {
        "sources": inputs.sources,
        "skipped": dict(sorted(inputs.skipped.items())),
        "gpu_fit": {
            "observations": gpu.observations,
            "parts": sorted({o.part for o in gpus}),
            "factors": gpu.factors,
            "memory_tied": gpu.memory_tied,
            "host_base_w": gpu.host_base_w,
            "host_per_cpu_tdp": gpu.host_per_cpu_tdp,
            "psu_efficiency": gpu.psu_efficiency,
            "loss": gpu.loss,
        },
        "gpu_held_out": {
            **gpu_accuracy.summary(),
            "band_fraction": gpu_accuracy.band_fraction,
            "baseline_band_fraction": gpu_accuracy.baseline_band_fraction,
            "coverage": gpu_accuracy.coverage,
            "baseline_coverage": gpu_accuracy.baseline_coverage,
            "maxq": gpu_accuracy.summary(gpu_accuracy.held_maxq) if gpu_accuracy.held_maxq else {},
        },
        "cap": {
            "pairs": len(cap.pairs),
            "maxq_submissions": len({p.group for p in cap.pairs}),
            "held_out_mean_abs_error_pct": 100 * float(np.mean(np.abs(cap.errors))),
        },
        "cpu": "calibrated" if cpu is not None else "no readings from two CPU models or more: CPUs are given their TDP",
        "band": f"the {quantile:.0%} quantile of absolute relative errors of held-out parts' uncapped draws",
    }
    result = PowerCalibration(
        gpu=_params(gpu, gpu_accuracy, quantile),
        cpu=_params(cpu, cpu_accuracy, quantile) if cpu is not None and cpu_accuracy is not None else None,
        cap=CapParams(exponent=cap.exponent, extra_error_pct=cap.extra_error_pct),
        provenance=_rounded(provenance),  # type: ignore[arg-type]
    )
    return Calibration(gpu, gpu_accuracy, cap, cpu, cpu_accuracy, result)
