"""A prediction for one workload profile on one catalog part: throughput, step time breakdown,
memory needed, and the band the kind of estimate earned out of sample.

This is what the recommender and the predictions API call. It reads only the shipped profiles and
calibration: no torch, no database. Results are cached per process (a prediction depends only on the
profile, the part's figures and the config), so a recommendation over the whole catalog is lookups.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.catalog import CatalogHardware
from app.contracts import Precision, Task
from app.perfmodel.bands import in_regime, regime
from app.perfmodel.device import Device, device, missing
from app.perfmodel.model import Breakdown, Case, steps
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

    @property
    def regime(self) -> str:
        """Whether the host or the device bounds the step, as the bands are split (app/perfmodel/bands.py)."""
        return regime(self.breakdown.host_s, self.breakdown.device_s)


def profile_of(workload: str, task: Task, precision: Precision) -> Profile | None:
    return profiles().get((workload, task, precision))


def why_not(workload: str, task: Task, precision: Precision, hardware: CatalogHardware) -> str | None:
    """Why this pair cannot be modelled, in words; None when it can."""
    if profile_of(workload, task, precision) is None:
        have = [p.value for p in Precision if profile_of(workload, task, p) is not None]
        if not have:
            return f"no profile of {workload}/{task.value} (scripts/build_profiles.py makes them)"
        return f"no {precision.value} profile of {workload}/{task.value}: its profiles are at {', '.join(have)}"
    return missing(hardware, precision)


def machine_band(kind: str, regime: str) -> float:
    """The ``machine`` band of a kind of device in a regime (the pooled one where the regime's is not
    measured): how far machines of one part measured one config apart (scripts/calibrate_perfmodel.py); 0
    where the calibration measured none (CPUs). A figure for a catalog part stands for any machine of it."""
    measured = calibration().bands
    name = f"{kind}-machine"
    return measured.get(in_regime(name, regime), measured.get(name, 0.0))


def band_of(kind: str, *otherwise: str) -> float:
    """The band ``kind`` of estimate earned; where the calibration measured none, the first of
    ``otherwise`` it did (``gpu-transfer``, else ``gpu``), else DEFAULT_BAND."""
    found = calibration().bands
    return next((found[k] for k in (kind, *otherwise) if k in found), DEFAULT_BAND)


def _key(hardware: CatalogHardware) -> tuple[object, ...]:
    """Every catalog figure the device model reads: an edited entry is a new key."""
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
        hardware.boost_mhz,
        hardware.tdp_w,
        hardware.power_limit_min_w,
        hardware.power_limit_max_w,
    )


@dataclass(frozen=True, slots=True)
class Ask:
    """One prediction asked of the model: ``traffic`` is a published stack's traffic factor
    (app/perfmodel/model.py); 1 for the eager PyTorch the profiles count."""

    precision: Precision
    batch: int
    hardware: CatalogHardware
    runtime: str
    threads: int | None = None
    traffic: float = 1.0
    streams: int = 1
    """Copies of the step at once, each on ``threads`` cores (a published throughput mode's way)."""


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
    """The model's prediction, or None when ``why_not`` has a reason."""
    return answer(workload, task, Ask(precision, batch, hardware, runtime, threads, traffic))


def answer(workload: str, task: Task, ask: Ask) -> Prediction | None:
    """``predict`` for an Ask."""
    key = _cache_key(workload, task, ask)
    if key not in _CACHE:
        prime(workload, task, [ask])
    return _CACHE[key]


def prime(workload: str, task: Task, asks: Iterable[Ask]) -> None:
    """Model every ask not cached yet, in one array evaluation per kind of device: a recommendation
    over the whole catalog asks for thousands of parts x configs at once."""
    pending: dict[str, dict[tuple[object, ...], tuple[Case, float | None]]] = {}
    devices: dict[tuple[object, ...], Device | None] = {}  # a part is asked for in many configs
    for ask in asks:
        key = _cache_key(workload, task, ask)
        if key in _CACHE:
            continue
        profile = profile_of(workload, task, ask.precision)
        part = (key[-1], ask.precision)
        if part not in devices:
            devices[part] = device(ask.hardware, ask.precision)
        dev = devices[part]
        if profile is None or dev is None:
            _remember(key, None)
            continue
        case = Case(profile, dev, ask.batch, ask.runtime, ask.threads, ask.traffic, ask.streams)
        pending.setdefault(dev.kind, {})[key] = (case, ask.hardware.memory_gb)
    for kind, cases in pending.items():
        found = steps([case for case, _ in cases.values()], calibration().of(kind))
        for (key, (case, memory_gb)), breakdown in zip(cases.items(), found, strict=True):
            _remember(key, _prediction(case, breakdown, memory_gb))


CACHE_SIZE = 200_000
_CACHE: dict[tuple[object, ...], Prediction | None] = {}


def forget() -> None:
    """Empty the prediction cache (a benchmark timing what a first ask costs)."""
    _CACHE.clear()


def _cache_key(workload: str, task: Task, ask: Ask) -> tuple[object, ...]:
    return (
        workload,
        task,
        ask.precision,
        ask.batch,
        ask.runtime,
        ask.threads,
        ask.traffic,
        ask.streams,
        _key(ask.hardware),
    )


def _remember(key: tuple[object, ...], found: Prediction | None) -> None:
    if len(_CACHE) >= CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = found


def _prediction(case: Case, breakdown: Breakdown, memory_gb: float | None) -> Prediction:
    needed = case.profile.memory.at(case.batch)
    fits = memory_gb is None or case.device.kind == "cpu" or needed <= memory_gb * 1e9
    return Prediction(
        throughput=case.batch * case.streams / breakdown.seconds,
        breakdown=breakdown,
        memory_bytes=needed,
        fits=fits,
        band=band_of(case.device.kind),
        band_kind=case.device.kind,
    )
