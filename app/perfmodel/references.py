"""hwadvisor's GPU reference runs (app/catalog/reference.py) as the performance model sees them: each
settled eager PyTorch inference or training result as a case to model beside its measurement.

The model's parameters are never fitted on these; they measure what the published rows cannot show:
eager PyTorch's host costs on a GPU (app/perfmodel/host.py) and the bands of the figures the runs calibrate
(scripts/calibrate_perfmodel.py): a part no run measured, calibrated by another part's run
(``transfer_errors``), a run's own part at a batch between those it measured (``between_errors``), a
16-bit precision calibrated by its twin's measurements (``twin_errors``), and a run's measurement
standing for another machine of its part (``machine_errors``). Each error carries the
regime the model puts its step in (app/perfmodel/bands.py ``regime``), so each band is measured per regime too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.catalog import CatalogHardware
from app.catalog.reference import settled_models
from app.contracts import Precision, ReferenceResult, ReferenceRun, Task
from app.perfmodel.bands import Error, regime
from app.perfmodel.device import device
from app.perfmodel.model import Case, Params, combined, steps
from app.perfmodel.predict import profile_of
from app.perfmodel.split import Timed, fit

EAGER = "torch-eager"

Config = tuple[str, Task, str, int]
"""(workload, task, precision, batch)."""


@dataclass(frozen=True, slots=True)
class Point:
    source: str
    """The reference run's source (``reference:hwadvisor-<part>``)."""
    run: str
    """The id of the run within it that measured the point: each had a machine of its own, or a machine an
    earlier run had, minutes later (the H100's second machine ran twice; at batch 1 its two runs moved as far
    apart as two machines do, so a run stands for one measurement of the part either way)."""
    vendor: str
    config: Config
    case: Case
    throughput: float
    """Measured samples per second."""
    architecture: str | None = None
    """The part's architecture (the catalog's: ``hopper``), where known."""


def points(runs: Iterable[ReferenceRun], catalog: Mapping[str, CatalogHardware]) -> list[Point]:
    """Every settled eager inference and training result of ``runs`` on a GPU the model can describe: each
    machine's, where several measured a config."""
    return [p for run in runs for entry in settled_models(run) if (p := _point(run, entry, catalog)) is not None]


def _point(run: ReferenceRun, entry: ReferenceResult, catalog: Mapping[str, CatalogHardware]) -> Point | None:
    spec = catalog[run.hardware_id]
    r = entry.result
    if r.runtime != EAGER or r.task is None or not r.throughput_samples_per_s:
        return None
    profile = profile_of(r.workload, r.task, r.precision)
    dev = device(spec, r.precision)
    if profile is None or dev is None or dev.kind != "gpu":
        return None
    config = (r.workload, r.task, r.precision.value, r.batch_size)
    case = Case(profile, dev, r.batch_size, EAGER)
    return Point(run.source, entry.run, spec.vendor, config, case, r.throughput_samples_per_s, spec.architecture)


def model_errors(found: Sequence[Point], params: Params) -> list[Error]:
    """log(modelled / measured) per point, the model alone, each with its step's regime."""
    modelled = steps([p.case for p in found], params) if found else []
    return [
        Error(math.log(p.case.batch / m.seconds / p.throughput), regime(m.host_s, m.device_s))
        for p, m in zip(found, modelled, strict=True)
    ]


def log_errors(found: Sequence[Point], params: Params) -> list[float]:
    """``model_errors``' values alone."""
    return [e.value for e in model_errors(found, params)]


def transfer_errors(found: Sequence[Point], params: Params) -> list[Error]:
    """log(transferred / measured) per point and per other reference's run of its vendor that measured its
    config: the model's figure for the point times that run's measured / modelled ratio there, moved by the
    run's split correction from its own step to the point's (app/perfmodel/split.py ``Split.moved``), as
    the recommender calibrates a part no run measured (app/recommender/estimators/modelled.py,
    ``lab_correction``)."""
    modelled = steps([p.case for p in found], params) if found else []
    curves: dict[tuple[str, str, Task, str], dict[tuple[str, str], dict[int, Timed]]] = {}
    for p, m in zip(found, modelled, strict=True):
        workload, task, precision, batch = p.config
        runs = curves.setdefault((p.vendor, workload, task, precision), {})
        runs.setdefault((p.source, p.run), {})[batch] = Timed(m.host_s, m.device_s, batch / p.throughput)
    splits = {
        (curve, run): fit(list(timed.values()), "gpu") for curve, runs in curves.items() for run, timed in runs.items()
    }
    errors = []
    for p, m in zip(found, modelled, strict=True):
        workload, task, precision, batch = p.config
        curve = (p.vendor, workload, task, precision)
        for (source, run), timed in curves[curve].items():
            if source == p.source or batch not in timed:
                continue
            other = timed[batch]
            split = splits[(curve, (source, run))]
            # the other run's log(measured / modelled) there, moved from its step to this point's
            carried = math.log(combined(other.host_s, other.device_s, "gpu") / other.measured_s)
            carried += split.moved((other.host_s, other.device_s), (m.host_s, m.device_s))
            errors.append(Error(carried - math.log(p.throughput * m.seconds / batch), regime(m.host_s, m.device_s)))
    return errors


TWINS = {Precision.fp16: Precision.bf16, Precision.bf16: Precision.fp16}
"""The 16-bit float precisions a GPU runs on the same tensor units, at the same rate on every catalog part
with both peaks but the MI100. Where nothing measured one on a kind of device (or only far from the batch
asked), the other's measurements calibrate it (app/recommender/estimators/modelled.py): the model reads
each precision's own peak, and the twin's measured / modelled ratio stands for the stack. ``twin_errors``
measures how far that errs: on the H200 run, fp16 convolutions ran up to 1.4x faster than bf16 ones
(cuDNN's kernels for the two differ) and fp16 GEMMs 3-13% slower."""


def twin_errors(found: Sequence[Point], params: Params) -> list[Error]:
    """log(calibrated / measured) per fp16 or bf16 point and per other machine's run of its vendor (any
    part) that measured its workload, task and batch at the twin precision (``TWINS``): the model's figure
    times that run's measured / modelled ratio at the twin, as the recommender calibrates a precision
    nothing measured. Another machine's only, so the error holds what moves between machines too."""

    def at_twin(config: Config) -> Config | None:
        workload, task, precision, batch = config
        twin = TWINS.get(Precision(precision))
        return (workload, task, twin.value, batch) if twin is not None else None

    return _carried(found, params, at_twin, lambda p, other: other.run != p.run)


def _carried(
    found: Sequence[Point],
    params: Params,
    calibrating: Callable[[Config], Config | None],
    counts: Callable[[Point, Point], bool],
) -> list[Error]:
    """log(calibrated / measured) per point and per other point of its vendor at the config
    ``calibrating`` names for it (none where it names none) that ``counts``: the model's figure times the
    other point's measured / modelled ratio, as the recommender carries a lab correction."""
    pairs = list(zip(found, model_errors(found, params), strict=True))
    by_config: dict[Config, list[tuple[Point, Error]]] = {}
    for p, e in pairs:
        by_config.setdefault(p.config, []).append((p, e))
    return [
        Error(e.value - other_e.value, e.regime)
        for p, e in pairs
        if (config := calibrating(p.config)) is not None
        for other, other_e in by_config.get(config, [])
        if other.vendor == p.vendor and counts(p, other)
    ]


def machine_errors(found: Sequence[Point], params: Params) -> list[Error]:
    """log(other / measured) per point and per other run of its reference that measured its config
    (another machine, or the same one minutes later: ``Point.run``): how far a reference run's
    measurement, standing for its part, is from what another machine with that part measures."""
    by_config: dict[tuple[str, Config], list[tuple[float, str]]] = {}
    for p, e in zip(found, model_errors(found, params), strict=True):
        by_config.setdefault((p.source, p.config), []).append((p.throughput, e.regime))
    return [
        Error(math.log(other / this), which)
        for measured in by_config.values()
        for i, (this, which) in enumerate(measured)
        for j, (other, _) in enumerate(measured)
        if i != j
    ]


BEYOND_NEAR = 2.0
"""How far beyond a run's batches (a multiple of the nearest one) its nearest ratio is checked as holding
like a ratio between them: benchmarks/beyond_batches.py found such points 0.106 off (90% quantile, 14 points)
where the GPU bounds the step, and 0.714 past it (8x and more, where the nearest batch was the host's). A round
value, not fitted."""


def between_errors(found: Sequence[Point], params: Params) -> list[Error]:
    """log(interpolated / measured) per point measured at a batch strictly between batches that another
    machine's run of the same reference measured for its workload, task and precision: the model at that
    batch times that run's measured / modelled ratio drawn between its batches (``at_batch``), as the
    recommender calibrates a reference run's own part at a batch the run did not measure. The other
    machine's points alone, so the error holds what moves between two machines of one part (the host
    bounds batch 1), as it does between hwadvisor's run and a lab's."""
    # per reference, workload, task and precision: each run's (batch, log ratio, regime) curve
    curves: dict[tuple[str, str, Task, str], dict[str, list[tuple[int, float, str]]]] = {}
    for p, e in zip(found, model_errors(found, params), strict=True):
        workload, task, precision, batch = p.config
        curves.setdefault((p.source, workload, task, precision), {}).setdefault(p.run, []).append(
            (batch, -e.value, e.regime)
        )
    errors: list[Error] = []
    for runs in curves.values():
        for run, own in runs.items():
            others = [(b, ratio) for other, curve in runs.items() if other != run for b, ratio, _ in curve]
            if not others:
                continue
            low, high = min(b for b, _ in others), max(b for b, _ in others)
            errors.extend(
                Error(at_batch(others, batch) - ratio, which) for batch, ratio, which in own if low < batch < high
            )
    return errors


def beyond_errors(found: Sequence[Point], params: Params) -> list[Error]:
    """log(carried / measured) per point whose batch lies more than BEYOND_NEAR times beyond every other batch
    its own run (machine) measured for its workload, task and precision: the model at that batch times the
    run's ratio at the nearest of those (``at_batch``: not extrapolated), as the recommender calibrates a
    part at a batch far outside the runs' batches. The same machine's points: no other machine's run lies
    that far from another's in the shipped runs, which share their grids; a catalog part's figure takes the
    machine band beside it."""
    curves: dict[tuple[str, str, Task, str], list[tuple[int, float, str]]] = {}
    for p, e in zip(found, model_errors(found, params), strict=True):
        workload, task, precision, batch = p.config
        curves.setdefault((p.run, workload, task, precision), []).append((batch, -e.value, e.regime))
    errors: list[Error] = []
    for curve in curves.values():
        for batch, ratio, which in curve:
            others = [(b, r) for b, r, _ in curve if b != batch]
            if others and beyond(batch, [b for b, _ in others]):
                errors.append(Error(at_batch(others, batch) - ratio, which))
    return errors


def reach(batch: int, measured: Sequence[int]) -> float:
    """How far ``batch`` lies outside the ``measured`` batches: |log(batch / the nearest of them)|, 0 at or
    between them."""
    return max(0.0, math.log(min(measured) / batch), math.log(batch / max(measured)))


def far(reach: float) -> bool:
    """Whether a ratio carried as far as ``reach`` (log units, as ``reach`` measures) went more than
    BEYOND_NEAR times beyond the batches measured."""
    return reach > math.log(BEYOND_NEAR)


def beyond(batch: int, measured: Sequence[int]) -> bool:
    """Whether ``batch`` lies more than BEYOND_NEAR times beyond every one of the ``measured`` batches."""
    return far(reach(batch, measured))


def at_batch(points: Sequence[tuple[int, float]], batch: int | None) -> float:
    """A device's log(measured / modelled) at ``batch`` from its (batch, log ratio) points: the mean of
    those at that batch; between two measured batches, the line between their means in log(batch);
    beyond them, the nearest one's (the error is not extrapolated); the mean of all with no batch."""
    if batch is None:
        return sum(r for _, r in points) / len(points)
    by: dict[int, list[float]] = {}
    for b, r in points:
        by.setdefault(b, []).append(r)
    means = sorted((b, sum(rs) / len(rs)) for b, rs in by.items())
    below = [(b, r) for b, r in means if b <= batch]
    above = [(b, r) for b, r in means if b >= batch]
    if not below:
        return above[0][1]
    if not above:
        return below[-1][1]
    (b0, r0), (b1, r1) = below[-1], above[0]
    if b0 == b1:
        return r0
    share = math.log(batch / b0) / math.log(b1 / b0)
    return r0 + share * (r1 - r0)
