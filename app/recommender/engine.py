"""The recommender: every candidate hardware x runtime x precision x batch for a WorkloadSpec,
estimated, checked against the constraints, ranked by the objective, the Pareto front marked."""

from __future__ import annotations

import dataclasses
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from sqlalchemy.orm import Session

from app.bench.variants.base import CAVEAT, variants
from app.catalog import CatalogHardware
from app.contracts import (
    DeviceKind,
    Estimate,
    EstimateKind,
    Precision,
    PredictionRequest,
    ReasonCode,
    Recommendation,
    Scope,
    Task,
    WorkloadSpec,
    workload_label,
)
from app.db import catalog as store
from app.db import evidence as queries
from app.errors import InvalidInput, NotFoundError
from app.perfmodel.generation import WEIGHT_ONLY
from app.perfmodel.lab_scaling import EMPTY
from app.perfmodel.params import shipped as calibration
from app.perfmodel.power import shipped as power_calibration
from app.perfmodel.profile import shipped as profiles
from app.recommender.columns import PRECISIONS, Columns, Option, columns
from app.recommender.estimators import Config, Evidence, estimate, estimate_all
from app.recommender.estimators.modelled import why_unmodelled
from app.recommender.evidence import (
    LAB,
    REFERENCE,
    Hardware,
    Point,
    catalog_hardware,
    lab_points,
    lab_scaling,
    machine_device,
    owned_hardware,
    public_points,
)
from app.recommender.guess import Guess
from app.recommender.objectives import objective
from app.recommender.options import Loaded, OptionTable, tables
from app.recommender.ranking import rank
from app.recommender.reasons import Why
from app.recommender.roofline import CUSTOM_RUNTIME, roofline_estimate
from app.recommender.runnable import filter_notes, refuse_unrunnable, refuse_untasked
from app.recommender.space import MODELLED_RUNTIME, ConfigSpace, modelled_precisions

_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = True


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Hold Python's cyclic garbage collector while an answer is built: it makes tens of thousands
    of small objects that all live until the end, and each full collection walks them all again
    (about half the time of a 1,000-machine answer). Reference counting still frees as usual; the
    collector runs again when the last concurrent answer is done."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def recommend(session: Session, spec: WorkloadSpec) -> Recommendation:
    with _collector_paused():
        return _recommend(session, spec)


def _recommend(session: Session, spec: WorkloadSpec) -> Recommendation:
    objective(spec.objective)  # an unknown objective is refused before any work (422, listing them)
    return rank(spec, *_estimated(session, spec))


def options(session: Session, spec: WorkloadSpec) -> tuple[Columns, list[str]]:
    """Every estimated hardware x config for the ask (the table ``recommend`` ranks, from the same
    cache) and the notes that go with it: for callers that decide more than a ranking (app/planner)."""
    with _collector_paused():
        return _estimated(session, spec)


def _estimated(session: Session, spec: WorkloadSpec) -> tuple[Columns, list[str]]:
    if spec.custom is None:
        refuse_untasked(spec.name, spec.task)
    table = tables.get(_table_key(session, spec), lambda: _table(session, spec))
    c = spec.constraints
    notes = table.notes(c.precisions, c.runtimes) + _variant_notes(spec, table.columns)
    if c.runtimes and spec.custom is None:
        kinds = c.device_kinds or list(DeviceKind)
        notes += filter_notes(c.runtimes, spec.task, kinds, partial(queries.runtimes_named, session))
    elif c.runtimes and CUSTOM_RUNTIME not in c.runtimes:
        notes.append(
            f"a custom workload's rows are modelled as {CUSTOM_RUNTIME}, which the runtimes asked leave out: "
            "POST /api/v1/predictions models one part for another runtime"
        )
    return table.columns, notes + _weight_only_notes(spec, table.columns)


def _weight_only_notes(spec: WorkloadSpec, table: Columns) -> list[str]:
    """Where a language model's weight-only int8 or int4, asked for and not measured, comes from."""
    if spec.custom is not None or spec.task not in (Task.prefill, Task.decode):
        return []
    have = {PRECISIONS[i] for i in set(table.precision_index.tolist())}
    missing = [p for p in spec.constraints.precisions or () if p in WEIGHT_ONLY and p not in have]
    if not missing:
        return []
    asked = "/".join(p.value for p in missing)
    return [
        f"a language model's {asked} is weight-only (llama.cpp's Q8_0/Q4_0), which no zoo profile models: the lab "
        f"measures it with runtime llama-cpp (the standard suite), and hwadvisor plan-serving {spec.name} "
        f"--precision {missing[0].value} predicts it on any catalog part"
    ]


def _variant_notes(spec: WorkloadSpec, table: Columns) -> list[str]:
    """What the ask is told of the variants the lab measured: how to see them, or what they are not."""
    measured = sorted(v for v in table.variants if v is not None)
    if not measured:
        return []
    if not spec.allow_variants:
        return [
            f"the lab also measured variants of {spec.name} ({', '.join(measured)}); allow_variants offers them "
            f"beside the original model ({CAVEAT})"
        ]
    offered = [v for v in measured if spec.constraints.variants is None or v in spec.constraints.variants]
    if not offered:
        return []
    return [
        f"variants offered ({', '.join(offered)}) are optimised forms of {spec.name}, measured for speed only: "
        f"their accuracy is unknown (random weights), so none is the original model's equal; {CAVEAT}"
    ]


def _table_key(session: Session, spec: WorkloadSpec) -> tuple[object, ...]:
    """What the ask's table depends on: the database's contents as far as an answer reads them, the
    shipped calibration (the loaded objects themselves: a reload is a new key), and the ask's workload,
    task, scope and batch (a custom workload: itself, its task and the precisions asked for)."""
    shipped = tuple(Loaded(thing) for thing in (calibration(), profiles(), power_calibration()))
    asked: tuple[object, ...]
    if spec.custom is not None:
        precisions = tuple(spec.constraints.precisions or ())
        asked = ("custom", spec.custom.model_dump_json(), spec.task, spec.batch_size, precisions)
        reads = queries.answer_inputs(session, None)
    else:
        asked = (spec.name, spec.task, spec.batch_size)
        reads = queries.answer_inputs(session, spec.name)
    return (reads, shipped, spec.scope, *asked)


def _table(session: Session, spec: WorkloadSpec) -> OptionTable:
    catalog = store.entries(session)
    owned = owned_hardware(session, catalog)
    hardware = list(owned)
    if spec.scope is Scope.catalog:
        hardware += [catalog_hardware(entry) for entry in catalog.values()]
    if spec.custom is not None:
        notes: list[str] = []
        options = _custom_options(spec, hardware, notes)
        return OptionTable(columns(options), notes, {}, [])
    return _options(session, spec, hardware, catalog)


def _options(
    session: Session, spec: WorkloadSpec, hardware: list[Hardware], catalog: dict[str, CatalogHardware]
) -> OptionTable:
    """Every hardware x config the lab, published results or the model can speak for, estimated (the
    ask's precision and runtime filters are applied when it is ranked: the table serves every filter)."""
    name, task = spec.name, spec.task
    measured = lab_points(session, name, task, [h for h in hardware if h.ref.owned])
    lab = [p for p in measured if p.variant is None]
    by_variant: dict[str, list[Point]] = {}
    for p in measured:
        if p.variant is not None:
            by_variant.setdefault(p.variant, []).append(p)
    public = public_points(session, name, task, catalog) if spec.scope is Scope.catalog else []
    modelled = modelled_precisions(name, task)
    notes: list[str] = []
    if not lab and not public and not modelled and not by_variant:
        notes.append(
            f"nothing has measured {spec.label} yet and it has no profile to model it from: schedule it on a lab "
            f"machine (hwadvisor jobs create --suite standard --machine <id>) or import published results "
            f"(hwadvisor import)"
        )
        return OptionTable(columns([]), notes, {}, [])
    if not lab and not public:
        notes.append(
            f"nothing has measured {spec.label} yet: every figure is modelled from its operator profile and the "
            "catalog's specs (kind predicted, with the band the model earned out of sample)"
        )
    evidence = Evidence(lab + public, workload=name, task=task)
    space = ConfigSpace(spec, lab, public, modelled)
    pairs: list[tuple[Hardware, Config]] = []
    shared = _SharedByPart(spec.scope)
    for h in hardware:
        if h.spec is None and not evidence.measured_on(h):
            continue  # nothing measured it and no catalog entry to predict it from (a GPU box's CPU, say)
        speaks_for_part = shared.speaks_for_part(h)
        for config in space.configs(h):
            if not speaks_for_part and not evidence.ran(h, config):
                continue  # the same figure as its part's, which one device (or the catalog entry) shows
            pairs.append((h, config))
    options: list[Option] = []
    unestimated: dict[tuple[str, Precision], int] = {}
    for (h, config), found in zip(pairs, estimate_all(pairs, evidence), strict=True):
        if found is None:
            pair = (config.runtime, config.precision)
            unestimated[pair] = unestimated.get(pair, 0) + 1
            continue
        options.append(Option(h, config, found))
    for variant, points in sorted(by_variant.items()):
        options += _variant_options(spec, variant, points, hardware, options)
    after = shared.notes()
    if public:
        sources = sorted({p.source for p in public})
        outside = any(s.startswith(REFERENCE) for s in sources)
        kinds = "results from outside the lab" if outside else "published results"
        after.append(f"{kinds} ({', '.join(sources)}) are shown with their source, apart from the lab's")
        if spec.batch_size is not None:
            after.append(
                "published results are at the batch sizes their sources used; leave batch free to see them all"
            )
    scaling = lab_scaling(session, catalog) if task is Task.train else EMPTY
    return OptionTable(columns(options, scaling), notes, unestimated, after)


BASELINE_PRECISION = Precision.fp32
"""A variant is told relative to the original model in fp32 eager PyTorch (MODELLED_RUNTIME) on the
same hardware at the same batch: what the model runs as its authors wrote it."""


def _variant_options(
    spec: WorkloadSpec, variant: str, points: list[Point], hardware: list[Hardware], originals: list[Option]
) -> list[Option]:
    """A variant's hardware x configs: where the lab measured it, along its own curves, and transferred
    to parts that never ran it; never modelled (the profiles are the original's). Each estimate's
    reasons start with what the variant is and its speed relative to the original on that hardware."""
    evidence = Evidence(points, workload=spec.name, task=spec.task, variant=variant)
    space = ConfigSpace(spec, points, [])
    shared = _SharedByPart(spec.scope)
    pairs = [
        (h, dataclasses.replace(config, variant=variant))
        for h in hardware
        if h.spec is not None or evidence.measured_on(h)
        for speaks in [shared.speaks_for_part(h)]
        for config in space.configs(h)
        if speaks or evidence.ran(h, config)
    ]
    baseline = {
        (o.hardware.key, o.config.batch_size, o.config.threads): o.estimate
        for o in originals
        if o.config.runtime == MODELLED_RUNTIME and o.config.precision is BASELINE_PRECISION
    }
    info = variants.get(variant).info if variant in variants else None
    options = []
    for (h, config), found in zip(pairs, estimate_all(pairs, evidence), strict=True):
        if found is None:
            continue
        base = baseline.get((h.key, config.batch_size, config.threads)) or next(
            (g for (key, batch, _t), g in baseline.items() if key == h.key and batch == config.batch_size), None
        )
        figures = {
            "variant": variant,
            "workload": spec.name,
            "description": info.description if info else "a variant this server does not know",
            "runtime": config.runtime,
            "precision": config.precision.value,
            "hardware": h.label,
            "batch_size": config.batch_size,
            "ratio": found.throughput_samples_per_s / base.throughput_samples_per_s if base else None,
            "baseline_kind": base.kind.value if base else None,
            "caveat": info.caveat if info else CAVEAT,
        }
        options.append(Option(h, config, _with_reason(found, Why(ReasonCode.variant, figures))))
    return options


def _with_reason(guess: Guess, first: Why) -> Guess:
    """The estimate with ``first`` before its own reasons (made when the answer lists it)."""
    inner = guess.why
    return dataclasses.replace(guess, why=lambda: [first, *(inner if isinstance(inner, list) else inner())])


class _SharedByPart:
    """A lab device's configs that it never ran itself are modelled from its part alone, so every
    device of that part gets the same figure: it is listed once, on the catalog entry when the ask
    covers the catalog, else on the part's first lab device (a fleet of 250 H100s shows one modelled
    row per config, not 250)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.speaker: dict[str, Hardware] = {}
        self.others: dict[str, int] = {}

    def speaks_for_part(self, h: Hardware) -> bool:
        if not h.ref.owned or h.spec is None:
            return True
        if self.scope is Scope.catalog:
            return False
        first = self.speaker.setdefault(h.spec.id, h)
        if first is not h:
            self.others[h.spec.id] = self.others.get(h.spec.id, 0) + 1
        return first is h

    def notes(self) -> list[str]:
        return [
            f"configs a lab device never ran are modelled from its part alone, the same for every device of that "
            f"part: {self.speaker[part].label} shows them for itself and its {n} other {self.speaker[part].ref.name} "
            "device(s)"
            for part, n in sorted(self.others.items())
        ]


def _custom_options(spec: WorkloadSpec, hardware: list[Hardware], notes: list[str]) -> list[Option]:
    assert spec.custom is not None
    given = (
        f"its operator profile ({len(spec.custom.buckets)} operator classes)"
        if spec.custom.buckets
        else "its FLOPs and bytes per sample"
    )
    notes.append(
        f"{spec.custom.name} is a custom workload nothing has measured: every figure is the performance model run "
        f"on {given} and the catalog's specs as {CUSTOM_RUNTIME} dispatches it, with the band an uncalibrated "
        "model earned out of sample (POST /api/v1/predictions models it for another runtime)"
    )
    precisions = spec.constraints.precisions or [Precision.fp32, Precision.tf32, Precision.bf16, Precision.fp16]
    batch = spec.batch_size or 1
    options = []
    by_part: dict[tuple[str, Precision], Guess | None] = {}  # every device of a part gets the same figure
    for h in hardware:
        for precision in precisions:
            key = (h.spec.id if h.spec is not None else h.key, precision)
            if key not in by_part:
                by_part[key] = roofline_estimate(h, spec.custom, precision, batch, spec.task)
            found = by_part[key]
            if found is not None:
                options.append(Option(h, Config(CUSTOM_RUNTIME, precision, batch, None, "model"), found))
    return options


def predict(session: Session, request: PredictionRequest) -> Estimate:
    """One hardware, one config: its estimate, or an error that says what to measure."""
    catalog = store.entries(session)
    owned = owned_hardware(session, catalog)
    if request.catalog_id is not None:
        hardware = catalog_hardware(store.known(catalog, request.catalog_id))
    else:
        assert request.machine_id is not None
        if request.device is None:
            raise InvalidInput("machine_id needs device too ('cpu' or 'cuda:0')")
        found = machine_device(owned, request.machine_id, request.device)
        if found is None:
            raise NotFoundError(f"machine {request.machine_id} has no device {request.device} (or is retired)")
        hardware = found
    named = partial(queries.runtimes_named, session)  # read only for a runtime no plug-in is named
    if request.custom is not None:
        refuse_unrunnable(request.runtime, request.task, hardware.ref.kind, hardware.ref.name, named=named)
        result = roofline_estimate(
            hardware, request.custom, request.precision, request.batch_size, request.task, request.runtime
        )
        if result is None:
            raise InvalidInput(
                f"the catalog lacks the {request.precision.value} peak or bandwidth of {hardware.ref.name}"
            )
        return _with_memory_fit(result, hardware, request.batch_size).to_contract()
    name, task, variant = request.name, request.task, request.variant
    refuse_untasked(name, task)
    points = [p for p in lab_points(session, name, task, owned) if p.variant == variant]
    if variant is None:
        points += public_points(session, name, task, catalog)  # published results are of the original models
    measured = {(p.runtime, p.hardware.ref.kind) for p in points}
    refuse_unrunnable(request.runtime, task, hardware.ref.kind, hardware.ref.name, measured, named)
    evidence = Evidence(points, workload=name, task=task, variant=variant)
    threads = request.threads
    if threads is None:
        threads = _most_threads(hardware, points, request.runtime, request.precision)
    # a figure measured on this part (or between its measured batches) before a model's, whatever the
    # source: the lab's CPU having run the runtime must not turn a reference run's H100 figure into a guess
    result = None
    for source in _sources_for(points, request.runtime):
        config = Config(request.runtime, request.precision, request.batch_size, threads, source, variant)
        guess = estimate(hardware, config, evidence)
        if guess is not None and guess.kind is not EstimateKind.predicted:
            result = guess
            break
        result = result or guess
    if result is None:
        what = f"{workload_label(name, task)}" + (f" in variant {variant}" if variant else "")
        if variant is not None:
            raise NotFoundError(
                f"nothing measured {what} with {request.runtime} at {request.precision.value}, here or on another "
                "part of its vendor (a variant is never modelled: the profiles are of the original models)",
                hint="measure it on one lab machine (a suite row with variants = [...])",
            )
        lab_config = Config(request.runtime, request.precision, request.batch_size, threads, LAB)
        raise NotFoundError(
            f"nothing measured {what} with {request.runtime} at {request.precision.value}"
            + (
                f", and the model cannot predict it: {why_unmodelled(hardware, lab_config, evidence)}"
                if hardware.spec
                else f", and {hardware.ref.name} has no catalog entry to predict from"
            ),
            hint="measure it on one lab machine (hwadvisor jobs create) or import published results",
        )
    return _with_memory_fit(result, hardware, request.batch_size).to_contract()


def _most_threads(hardware: Hardware, points: list[Point], runtime: str, precision: Precision) -> int | None:
    """Threads left unset for a lab CPU: the most it measured the runtime and precision at (its suites' "all"
    is its cores), so that what it measured answers; None where it measured none (the model's, all cores)."""
    ran = [
        p.threads
        for p in points
        if p.source == LAB and p.hardware.key == hardware.key and (p.runtime, p.precision) == (runtime, precision)
    ]
    return max((t for t in ran if t is not None), default=None)


def _sources_for(points: list[Point], runtime: str) -> list[str]:
    """The sources to estimate a runtime's config from, in the order ties go: the lab's first where it
    ran the runtime, then each other source that did (a reference run, a published one), and the lab's
    last where it did not, whose config the model answers when nothing measured says anything of this one."""
    others = sorted({p.source for p in points if p.runtime == runtime and p.source != LAB}, key=_reference_first)
    if any(p.runtime == runtime for p in points if p.source == LAB):
        return [LAB, *others]
    return [*others, LAB]


def _reference_first(source: str) -> tuple[bool, str]:
    return (not source.startswith(REFERENCE), source)


def _with_memory_fit(result: Guess, hardware: Hardware, batch: int) -> Guess:
    """A config that does not fit the GPU's memory keeps its figure, with the reason it cannot run as
    asked (the recommender rejects it for the same reason)."""
    spec = hardware.spec
    if result.memory_gb is None or spec is None or spec.kind != "gpu" or not spec.memory_gb:
        return result
    if result.memory_gb <= spec.memory_gb:
        return result
    figures = {"hardware": hardware.ref.name, "batch_size": batch, "needed_gb": result.memory_gb}
    result.why = [*result.reasons, Why(ReasonCode.out_of_memory, {**figures, "memory_gb": spec.memory_gb})]
    return result
