"""Transfer a measured throughput to hardware that has none: a roofline fitted to the data.

The time of one sample on hardware h is modelled as

    t(h) = c / F(h, precision) + m / B(h) + v / V(h)

where F is the peak FLOP/s of the precision's math units (tensor cores), B the memory bandwidth and
V the peak of plain fp32 vector math (what normalisation, activations and optimiser steps run on).
The coefficients c, m, v >= 0 are the workload's split between being compute-, memory- and
vector-bound; they are learned from the hardware that measured it (non-negative least squares on
relative error) — Habitat's idea of scaling each part by the ratio of the resource it is bound by,
with the split learned from measurements instead of kernel traces.

With fewer than ``MIN_FIT`` references the split cannot be learned; the model then assumes the time
on the references is half compute, half memory (the roofline's ridge point) and fits only the
scale, with the wider error band docs/ACCURACY.md measured for one-reference transfers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.catalog import CatalogHardware
from app.contracts import Precision
from app.perfmodel.device import peak
from app.perfmodel.nnls import nnls

MIN_FIT = 3
# Root-mean-square error of a transfer from a single reference GPU, every pair of Lambda 2024 GPUs
# (benchmarks/accuracy.py, docs/ACCURACY.md): the band given when the split cannot be learned.
FEW_REFERENCES_ERROR_PCT = 27.0
# No band narrower than this: run-to-run spread of the same GPU in the public data is about 5%.
MIN_ERROR_PCT = 5.0

TERMS = ("compute", "memory", "vector")


def features(hardware: CatalogHardware, precision: Precision) -> dict[str, float]:
    """Seconds-per-unit-work of each term (1 / peak), for the figures the catalog has."""
    found: dict[str, float] = {}
    top = peak(hardware, precision)
    if top:
        found["compute"] = 1.0 / top
    if hardware.memory_bandwidth_gb_s:
        found["memory"] = 1000.0 / hardware.memory_bandwidth_gb_s
    if hardware.peak_fp32_tflops:
        found["vector"] = 1.0 / hardware.peak_fp32_tflops
    return found


def missing_for(hardware: CatalogHardware, precision: Precision) -> str | None:
    """Why ``hardware`` cannot be predicted at ``precision``, or None when it can."""
    if not peak(hardware, precision):
        return f"the catalog has no {precision.value} peak for {hardware.name}"
    return None


@dataclass(frozen=True, slots=True)
class Reference:
    """A measured throughput; ``precision`` is the one it ran at (the math units whose peak applies)."""

    name: str
    hardware: CatalogHardware
    precision: Precision
    throughput: float


@dataclass(frozen=True, slots=True)
class Transfer:
    throughput: float
    error_pct: float
    learned: bool
    split: dict[str, float]


def _coefficients(references: Sequence[Reference], terms: Sequence[str]) -> tuple[np.ndarray, bool]:
    rows = [features(r.hardware, r.precision) for r in references]
    if len(references) >= MIN_FIT:
        # Row i: predicted time / measured time = 1, i.e. sum_k x_k f_ik * y_i = 1 (relative error).
        a = np.array([[row[t] * r.throughput for t in terms] for row, r in zip(rows, references, strict=True)])
        return nnls(a, np.ones(len(references))), True
    # Too few to learn the split: each reference's time taken as half compute, half memory (or all on
    # the one term there is), so x_k = share_k * t_ref / f_k(ref); the references' x are averaged.
    shares = {t: 1.0 for t in terms if t in ("compute", "memory")} or {terms[0]: 1.0}
    total = sum(shares.values())
    per_reference = [
        [shares.get(t, 0.0) / total / (row[t] * r.throughput) for t in terms]
        for row, r in zip(rows, references, strict=True)
    ]
    return np.mean(np.array(per_reference), axis=0), False


def transfer(
    references: Sequence[Reference], target: CatalogHardware, precision: Precision, *, with_band: bool = True
) -> Transfer | None:
    """The throughput on ``target`` from the references' measured throughputs; None if nothing to go on.

    ``with_band=False`` skips the leave-one-out error (used inside the leave-one-out itself)."""
    usable = [r for r in references if missing_for(r.hardware, r.precision) is None and r.throughput > 0]
    if not usable or missing_for(target, precision) is not None:
        return None
    target_features = features(target, precision)
    terms = [t for t in TERMS if t in target_features and all(t in features(r.hardware, r.precision) for r in usable)]
    if not terms:
        return None
    x, learned = _coefficients(usable, terms)
    seconds = float(sum(x[i] * target_features[t] for i, t in enumerate(terms)))
    if seconds <= 0 or not math.isfinite(seconds):
        return None
    error = _leave_one_out_pct(usable) if with_band and len(usable) > MIN_FIT else None
    error_pct = max(MIN_ERROR_PCT, error if error is not None else FEW_REFERENCES_ERROR_PCT)
    if not learned:
        error_pct = max(error_pct, FEW_REFERENCES_ERROR_PCT)
    share = {t: float(x[i] * target_features[t] / seconds) for i, t in enumerate(terms)}
    return Transfer(1.0 / seconds, error_pct, learned, share)


def _leave_one_out_pct(references: Sequence[Reference]) -> float | None:
    """Root-mean-square relative error of predicting each reference from the others."""
    errors = []
    for held in references:
        rest = [r for r in references if r is not held]
        predicted = transfer(rest, held.hardware, held.precision, with_band=False)
        if predicted is not None:
            errors.append((predicted.throughput - held.throughput) / held.throughput * 100)
    if not errors:
        return None
    return math.sqrt(statistics.fmean(e * e for e in errors))
