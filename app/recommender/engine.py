"""The recommender: every candidate hardware x runtime x precision x batch for a WorkloadSpec,
estimated, checked against the constraints, ranked by the objective, the Pareto front marked."""

from __future__ import annotations

import gc
import math
import statistics
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from sqlalchemy.orm import Session

from app.catalog import CatalogHardware, store
from app.contracts import (
    Candidate,
    DeviceKind,
    Estimate,
    EstimateKind,
    PowerBasis,
    Precision,
    PredictionRequest,
    Recommendation,
    Rejection,
    Scope,
    WorkloadSpec,
)
from app.errors import InvalidInput, NotFoundError
from app.recommender.estimators import Config, Evidence, estimate
from app.recommender.evidence import (
    LAB,
    Hardware,
    Point,
    catalog_hardware,
    lab_points,
    machine_device,
    owned_hardware,
    public_points,
)
from app.recommender.guess import Guess
from app.recommender.objectives import Scored, objectives, pareto
from app.recommender.power import capped
from app.recommender.roofline import roofline_estimate

_POWER_WORDS = {
    PowerBasis.tdp: "its TDP; nothing measured it",
    PowerBasis.transferred: "its TDP times the share the references drew",
    PowerBasis.capped: "its power cap",
}
KIND_ORDER = {EstimateKind.measured: 2, EstimateKind.interpolated: 1, EstimateKind.predicted: 0}
SECONDS_PER_YEAR = 365.25 * 86400
MAX_REJECTED = 200


class Option(NamedTuple):
    """One hardware x config with its estimate (a tuple: there are tens of thousands per answer)."""

    hardware: Hardware
    config: Config
    estimate: Guess


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
    catalog = store.entries(session)
    owned = owned_hardware(session, catalog)
    hardware = list(owned)
    if spec.scope is Scope.catalog:
        hardware += [catalog_hardware(entry) for entry in catalog.values()]
    notes: list[str] = []
    if spec.custom is not None:
        options = _custom_options(spec, hardware, notes)
    else:
        options = _options(session, spec, hardware, catalog, notes)
    return _rank(spec, options, notes)


def _options(
    session: Session,
    spec: WorkloadSpec,
    hardware: list[Hardware],
    catalog: dict[str, CatalogHardware],
    notes: list[str],
) -> list[Option]:
    name = spec.workload_name
    lab = lab_points(session, name, [h for h in hardware if h.ref.owned])
    public = public_points(session, name, catalog) if spec.scope is Scope.catalog else []
    if not lab and not public:
        notes.append(
            f"nothing has measured {name} yet: schedule it on a lab machine "
            f"(hwadvisor jobs create --suite standard --machine <id>) or import published results (hwadvisor import)"
        )
        return []
    evidence = Evidence(lab + public)
    space = _ConfigSpace(spec, lab, public)
    options: list[Option] = []
    unestimated = 0
    for h in hardware:
        if h.spec is None and not evidence.measured_on(h):
            continue  # nothing measured it and no catalog entry to predict it from (a GPU box's CPU, say)
        for config in space.configs(h):
            if not _allowed(spec, config):
                continue
            found = estimate(h, config, evidence)
            if found is None:
                unestimated += 1
                continue
            options.append(Option(h, config, found))
    if unestimated:
        notes.append(
            f"{unestimated} hardware x config pairs had no measurement and nothing to predict them from "
            "(no catalog entry, or no peak for that precision)"
        )
    if public:
        sources = sorted({p.source for p in public})
        notes.append(f"published results ({', '.join(sources)}) are shown with their source, apart from the lab's")
        if spec.batch_size is not None:
            notes.append(
                "published results are at the batch sizes their sources used; leave batch free to see them all"
            )
    return options


def _allowed(spec: WorkloadSpec, config: Config) -> bool:
    constraints = spec.constraints
    if constraints.precisions is not None and config.precision not in constraints.precisions:
        return False
    return constraints.runtimes is None or config.runtime in constraints.runtimes


class _ConfigSpace:
    """The configs anything measured, indexed once per ask (the fleet may be large)."""

    def __init__(self, spec: WorkloadSpec, lab: list[Point], public: list[Point]) -> None:
        self.spec = spec
        ran: dict[tuple[DeviceKind, str, Precision], list[Point]] = {}
        for p in lab:
            ran.setdefault((p.hardware.ref.kind, p.runtime, p.precision), []).append(p)
        self.lab: dict[DeviceKind, list[tuple[str, Precision, set[int], set[int | None]]]] = {}
        for (kind, runtime, precision), points in ran.items():
            batches = {spec.batch_size} if spec.batch_size else {p.batch_size for p in points}
            threads = {p.threads for p in points}
            self.lab.setdefault(kind, []).append((runtime, precision, batches, threads))
        self.own_threads: dict[tuple[str, str, Precision], set[int | None]] = {}
        for p in lab:
            self.own_threads.setdefault((p.hardware.key, p.runtime, p.precision), set()).add(p.threads)
        self.public: dict[tuple[str, str, Precision], list[Point]] = {}
        for p in public:
            self.public.setdefault((p.source, p.runtime, p.precision), []).append(p)
        self._cache: dict[tuple[object, ...], list[Config]] = {}
        self.public_batch = {
            key: int(statistics.median(p.batch_size for p in points)) for key, points in self.public.items()
        }

    def configs(self, h: Hardware) -> list[Config]:
        """The configs to estimate on ``h`` (the same for every GPU of a kind the lab owns: cached)."""
        kind = h.ref.kind
        own = tuple(
            (runtime, precision, tuple(sorted(self.own_threads.get((h.key, runtime, precision), ()), key=str)))
            for runtime, precision, _b, _t in self.lab.get(kind, [])
            if kind is DeviceKind.cpu
        )
        key = (kind, h.ref.owned, own, None if h.ref.owned or h.spec is None else h.spec.id)
        if key not in self._cache:
            self._cache[key] = self._configs(h)
        return self._cache[key]

    def _configs(self, h: Hardware) -> list[Config]:
        kind = h.ref.kind
        configs: set[Config] = set()
        for runtime, precision, batches, threads in self.lab.get(kind, []):
            if kind is DeviceKind.cpu:
                threads = self.own_threads.get((h.key, runtime, precision)) or {None}
            configs.update(Config(runtime, precision, b, t) for b in batches for t in threads)
        if not h.ref.owned:
            for (source, runtime, precision), points in self.public.items():
                if points[0].hardware.ref.kind is not kind:
                    continue
                same_part = [
                    p
                    for p in points
                    if h.spec is not None and p.hardware.spec is not None and p.hardware.spec.id == h.spec.id
                ]
                batch = same_part[0].batch_size if same_part else self.public_batch[(source, runtime, precision)]
                if self.spec.batch_size is None or self.spec.batch_size == batch:
                    configs.add(Config(runtime, precision, batch, None, source))
        return sorted(configs, key=lambda c: (c.source, c.runtime, c.precision.value, c.batch_size, c.threads or 0))


def _custom_options(spec: WorkloadSpec, hardware: list[Hardware], notes: list[str]) -> list[Option]:
    assert spec.custom is not None
    notes.append(
        f"{spec.custom.name} is a custom workload nothing has measured: every figure is a roofline prediction "
        "from its FLOPs and bytes per sample and the catalog's peaks (±50%)"
    )
    precisions = spec.constraints.precisions or [Precision.fp32, Precision.tf32, Precision.bf16, Precision.fp16]
    batch = spec.batch_size or 1
    options = []
    for h in hardware:
        for precision in precisions:
            config = Config("any", precision, batch, None, "model")
            if spec.constraints.runtimes is not None and "any" not in spec.constraints.runtimes:
                continue
            found = roofline_estimate(h, spec.custom, precision, batch)
            if found is not None:
                options.append(Option(h, config, found))
    return options


def _limits(spec: WorkloadSpec) -> float | None:
    """The per-device power budget: the tighter of the device budget and the system budget shared out."""
    c = spec.constraints
    shares = [
        b
        for b in (c.power_budget_w, c.system_power_budget_w / c.device_count if c.system_power_budget_w else None)
        if b
    ]
    return min(shares) if shares else None


def _reasons(spec: WorkloadSpec, option: Option, price: float | None) -> list[str]:
    c, e, name = spec.constraints, option.estimate, option.hardware.ref.name
    n = c.device_count
    at = f"at batch {option.config.batch_size}"
    reasons = []
    if c.power_budget_w is not None or c.system_power_budget_w is not None:
        if e.power_w is None:
            catalog_id = option.hardware.ref.catalog_id or "<id>"
            reasons.append(
                f"{name} has no measured power and no TDP in the catalog, so the power budget cannot be checked "
                f"(set tdp_w: PUT /api/v1/catalog/{catalog_id})"
            )
        else:
            words = _POWER_WORDS.get(e.power_basis) if e.power_basis is not None else None
            basis = f" ({words})" if words else ""
            if c.power_budget_w is not None and e.power_w > c.power_budget_w:
                reasons.append(f"{name} draws {e.power_w:,.0f} W {at}{basis}, budget {c.power_budget_w:,.0f} W")
            if c.system_power_budget_w is not None and e.power_w * n > c.system_power_budget_w:
                reasons.append(
                    f"{n} x {name} draw {e.power_w * n:,.0f} W {at}{basis}, "
                    f"system budget {c.system_power_budget_w:,.0f} W"
                )
    if c.latency_p99_slo_ms is not None:
        if e.latency_p99_ms is None:
            reasons.append(f"no p99 latency known for {name} {at}")
        elif e.latency_p99_ms > c.latency_p99_slo_ms:
            reasons.append(f"p99 latency {e.latency_p99_ms:,.1f} ms {at} is over the {c.latency_p99_slo_ms:g} ms SLO")
    if c.min_throughput_samples_per_s is not None and e.throughput_samples_per_s * n < c.min_throughput_samples_per_s:
        reasons.append(
            f"{n} x {name} give {e.throughput_samples_per_s * n:,.1f}/s {at}, "
            f"under the {c.min_throughput_samples_per_s:,.0f}/s asked"
        )
    if c.max_price_usd is not None:
        if price is None:
            reasons.append(f"no price known for {name} (set price_usd: PUT /api/v1/catalog/<id>)")
        elif price * n > c.max_price_usd:
            reasons.append(f"{n} x ${price:,.0f} = ${price * n:,.0f} is over the ${c.max_price_usd:,.0f} limit")
    return reasons


def _price(h: Hardware) -> float | None:
    if h.spec is None:
        return None
    return h.spec.price_usd if h.spec.price_usd is not None else h.spec.release_price_usd


def _score(spec: WorkloadSpec, e: Guess, price: float | None) -> Scored:
    throughput = e.throughput_samples_per_s
    per_w = throughput / e.power_w if e.power_w else None
    joules = e.power_w / throughput if e.power_w is not None else None
    cost = None
    if price is not None and e.power_w is not None:
        per_second = (
            price / (spec.amortisation_years * SECONDS_PER_YEAR)
            + e.power_w / 1000 / 3600 * spec.electricity_usd_per_kwh
        )
        cost = per_second * 1e6 / throughput
        cost = cost if math.isfinite(cost) else None
    return Scored(
        throughput, throughput * spec.constraints.device_count, e.latency_p99_ms, e.power_w, per_w, joules, cost
    )


def _rank(spec: WorkloadSpec, options: list[Option], notes: list[str]) -> Recommendation:
    budget = _limits(spec)
    feasible: list[tuple[Option, Scored, float | None]] = []
    rejected: list[tuple[Option, list[str]]] = []
    for option in options:
        price = _price(option.hardware)
        reasons = _reasons(spec, option, price)
        if reasons:
            rejected.append((option, reasons))
            power_only = all(" budget " in r and " draw" in r for r in reasons)
            if budget is not None and power_only:
                lower = capped(option.hardware, option.estimate, budget)
                if lower is not None:
                    option = option._replace(estimate=lower)
                    if not _reasons(spec, option, price):
                        feasible.append((option, _score(spec, option.estimate, price), price))
            continue
        feasible.append((option, _score(spec, option.estimate, price), price))
    key = objectives.get(spec.objective.value)
    feasible.sort(key=lambda item: (key(item[1]), KIND_ORDER[item[0].estimate.kind], item[1].throughput), reverse=True)
    front = pareto([(s.throughput, s.power_w if s.power_w is not None else float("inf")) for _, s, _ in feasible])
    candidates = [
        _candidate(rank, option, scored, price, spec, on_front)
        for rank, ((option, scored, price), on_front) in enumerate(zip(feasible, front, strict=True), start=1)
        if rank <= spec.limit
    ]
    if len(feasible) > spec.limit:
        notes.append(f"{len(feasible)} feasible candidates; the best {spec.limit} are listed (raise limit for more)")
    rejected.sort(key=lambda r: r[0].estimate.throughput_samples_per_s, reverse=True)
    if len(rejected) > MAX_REJECTED:
        notes.append(f"{len(rejected)} candidates rejected; the {MAX_REJECTED} fastest are listed")
    listed = [_rejection(option, reasons) for option, reasons in rejected[:MAX_REJECTED]]
    return Recommendation(query=spec, candidates=candidates, rejected=listed, notes=notes)


def _rejection(option: Option, reasons: list[str]) -> Rejection:
    return Rejection(
        hardware=option.hardware.ref,
        runtime=option.config.runtime,
        precision=option.config.precision,
        batch_size=option.config.batch_size,
        threads=option.config.threads,
        estimate=option.estimate.to_contract(),
        reasons=reasons,
    )


def _candidate(
    rank: int, option: Option, s: Scored, price: float | None, spec: WorkloadSpec, on_front: bool
) -> Candidate:
    n = spec.constraints.device_count
    return Candidate(
        rank=rank,
        hardware=option.hardware.ref,
        runtime=option.config.runtime,
        precision=option.config.precision,
        batch_size=option.config.batch_size,
        threads=option.config.threads,
        estimate=option.estimate.to_contract(),
        throughput_per_w=s.throughput_per_w,
        energy_per_sample_j=s.energy_per_sample_j,
        price_usd=price,
        cost_per_million_samples_usd=s.cost_per_million_usd,
        system_throughput_samples_per_s=s.system_throughput,
        system_power_w=s.power_w * n if s.power_w is not None else None,
        pareto=on_front,
    )


def predict(session: Session, request: PredictionRequest) -> Estimate:
    """One hardware, one config: its estimate, or an error that says what to measure."""
    catalog = store.entries(session)
    owned = owned_hardware(session, catalog)
    if request.catalog_id is not None:
        entry = catalog.get(request.catalog_id)
        if entry is None:
            raise NotFoundError(f"no catalog entry {request.catalog_id!r}", hint="GET /api/v1/catalog lists them")
        hardware = catalog_hardware(entry)
    else:
        assert request.machine_id is not None
        if request.device is None:
            raise InvalidInput("machine_id needs device too ('cpu' or 'cuda:0')")
        found = machine_device(owned, request.machine_id, request.device)
        if found is None:
            raise NotFoundError(f"machine {request.machine_id} has no device {request.device} (or is retired)")
        hardware = found
    if request.custom is not None:
        result = roofline_estimate(hardware, request.custom, request.precision, request.batch_size)
        if result is None:
            raise InvalidInput(
                f"the catalog lacks the {request.precision.value} peak or bandwidth of {hardware.ref.name}"
            )
        return result.to_contract()
    name = request.workload_name
    points = lab_points(session, name, owned) + public_points(session, name, catalog)
    source = LAB if any(p.runtime == request.runtime for p in points if p.source == LAB) else None
    if source is None:
        source = next((p.source for p in points if p.runtime == request.runtime), LAB)
    config = Config(request.runtime, request.precision, request.batch_size, request.threads, source)
    result = estimate(hardware, config, Evidence(points))
    if result is None:
        raise NotFoundError(
            f"nothing measured {name} with {request.runtime} at {request.precision.value}"
            + ("" if hardware.spec else f", and {hardware.ref.name} has no catalog entry to predict from"),
            hint="measure it on one lab machine (hwadvisor jobs create) or import published results",
        )
    return result.to_contract()
