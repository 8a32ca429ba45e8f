"""A prediction for one workload profile on one catalog part: throughput, step time breakdown,
memory needed, and the band the kind of estimate earned out of sample.

This is what the recommender and the predictions API call. It reads only the shipped profiles and
calibration: no torch, no database. Results are cached per process (a prediction depends only on the
profile, the part's figures and the config), so a recommendation over the whole catalog is lookups.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.catalog import CatalogHardware
from app.contracts import Precision, Task
from app.perfmodel.device import Device, device, missing
from app.perfmodel.model import Breakdown, step
from app.perfmodel.params import shipped as calibration
from app.perfmodel.profile import Profile
from app.perfmodel.profile import shipped as profiles

DEFAULT_BAND = 0.5
"""Absolute log error for a kind of estimate nothing has measured the error of yet (x/÷1.65)."""


@dataclass(frozen=True, slots=True)
class Prediction:
    throughput: float
    """Samples per second on one device, before any stack factor."""
    breakdown: Breakdown
    memory_bytes: float
    fits: bool
    band: float
    """Absolute log error at 90% coverage for this kind of estimate."""
    band_kind: str


def profile_of(workload: str, task: Task, precision: Precision) -> Profile | None:
    return profiles().get((workload, task, precision))


def why_not(workload: str, task: Task, precision: Precision, hardware: CatalogHardware) -> str | None:
    """Why this pair cannot be modelled, in words; None when it can."""
    if profile_of(workload, task, precision) is None:
        return f"no {precision.value} profile of {workload}/{task.value} (scripts/build_profiles.py makes them)"
    return missing(hardware, precision)


def band_of(kind: str) -> float:
    return calibration().bands.get(kind, DEFAULT_BAND)


def _key(hardware: CatalogHardware) -> tuple[object, ...]:
    return (
        hardware.id,
        hardware.kind,
        hardware.peak_fp32_tflops,
        hardware.peak_tf32_tflops,
        hardware.peak_bf16_tflops,
        hardware.peak_fp16_tflops,
        hardware.peak_int8_tops,
        hardware.memory_bandwidth_gb_s,
        hardware.memory_gb,
        hardware.l2_mb,
        hardware.l3_mb,
        hardware.sm_count,
        hardware.cores,
    )


def predict(
    workload: str,
    task: Task,
    precision: Precision,
    batch: int,
    hardware: CatalogHardware,
    *,
    runtime: str,
    threads: int | None = None,
    traffic: float = 1.0,
) -> Prediction | None:
    """The model's prediction, or None when ``why_not`` has a reason. ``traffic`` is a published
    stack's traffic factor (app/perfmodel/model.py); 1 for the eager PyTorch the profiles count."""
    key = (workload, task, precision, batch, runtime, threads, traffic, _key(hardware))
    if key in _CACHE:
        return _CACHE[key]
    profile = profile_of(workload, task, precision)
    dev = device(hardware, precision)
    found = (
        None
        if profile is None or dev is None
        else _predict(profile, dev, batch, runtime, threads, traffic, hardware.memory_gb)
    )
    if len(_CACHE) >= CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = found
    return found


CACHE_SIZE = 200_000
_CACHE: dict[tuple[object, ...], Prediction | None] = {}


def _predict(
    profile: Profile,
    dev: Device,
    batch: int,
    runtime: str,
    threads: int | None,
    traffic: float,
    memory_gb: float | None,
) -> Prediction:
    params = calibration().of(dev.kind)
    breakdown = step(profile, dev, batch, params, runtime=runtime, threads=threads, traffic=traffic)
    needed = profile.memory.at(batch)
    fits = memory_gb is None or dev.kind == "cpu" or needed <= memory_gb * 1e9
    return Prediction(
        throughput=batch / breakdown.seconds,
        breakdown=breakdown,
        memory_bytes=needed,
        fits=fits,
        band=band_of(dev.kind),
        band_kind=dev.kind,
    )
