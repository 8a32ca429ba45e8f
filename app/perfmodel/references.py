"""hwadvisor's GPU reference runs (app/catalog/reference.py) as the performance model sees them: each
settled eager PyTorch inference or training result as a case to model beside its measurement.

The model's parameters are never fitted on these; they measure what the published rows cannot show:
the autograd factor (app/perfmodel/host.py) and the bands of the figures the runs calibrate
(scripts/calibrate_perfmodel.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.catalog import CatalogHardware
from app.catalog.reference import settled_models
from app.contracts import ReferenceRun, Task
from app.perfmodel.device import device
from app.perfmodel.model import Case, Params, steps
from app.perfmodel.predict import profile_of

EAGER = "torch-eager"

Config = tuple[str, Task, str, int]
"""(workload, task, precision, batch)."""


@dataclass(frozen=True, slots=True)
class Point:
    source: str
    """The reference run's source (``reference:hwadvisor-<part>``)."""
    vendor: str
    config: Config
    case: Case
    throughput: float
    """Measured samples per second."""


def points(runs: Iterable[ReferenceRun], catalog: Mapping[str, CatalogHardware]) -> list[Point]:
    """Every settled eager inference and training result of ``runs`` on a GPU the model can describe."""
    found = []
    for run in runs:
        spec = catalog[run.hardware_id]
        for entry in settled_models(run):
            r = entry.result
            if r.runtime != EAGER or r.task is None or r.throughput_samples_per_s is None:
                continue
            profile = profile_of(r.workload, r.task, r.precision)
            dev = device(spec, r.precision)
            if profile is None or dev is None or dev.kind != "gpu":
                continue
            config = (r.workload, r.task, r.precision.value, r.batch_size)
            case = Case(profile, dev, r.batch_size, EAGER)
            found.append(Point(run.source, spec.vendor, config, case, r.throughput_samples_per_s))
    return found


def log_errors(found: Sequence[Point], params: Params) -> list[float]:
    """log(modelled / measured) per point, the model alone."""
    if not found:
        return []
    modelled = steps([p.case for p in found], params)
    return [math.log(p.case.batch / m.seconds / p.throughput) for p, m in zip(found, modelled, strict=True)]


def transfer_errors(found: Sequence[Point], params: Params) -> list[float]:
    """log(transferred / measured) per point and per other run of its vendor that measured its config:
    the other run's measurement times the model's ratio between the two parts, as the recommender
    calibrates a part no run measured (app/recommender/estimators/modelled.py, ``lab_correction``)."""
    by_config: dict[Config, list[tuple[Point, float]]] = {}
    for p, e in zip(found, log_errors(found, params), strict=True):
        by_config.setdefault(p.config, []).append((p, e))
    return [
        e - other_e
        for measured in by_config.values()
        for p, e in measured
        for other, other_e in measured
        if other.source != p.source and other.vendor == p.vendor
    ]
