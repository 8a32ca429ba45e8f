"""A plan per candidate: the fewest devices that hold the model and reach the target, priced.

Every hardware x runtime x precision x batch the recommender estimated for the workload (one
device: measured, interpolated or predicted, the same table ``recommend`` ranks) is taken through
``memory`` (how many devices must share the model), ``scale`` (how many reach the target) and
``costs`` (what that many cost to own and run), checked against the whole system's constraints,
and ranked by the plan's objective. Of each hardware x runtime x precision the best batch is listed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy.orm import Session

from app.contracts import (
    ClusterRead,
    Constraints,
    Plan,
    PlanCandidate,
    PlanObjective,
    PlanRejection,
    PlanRequest,
    Precision,
    Price,
    ReasonCode,
    Scope,
    Task,
    WorkloadSpec,
)
from app.db import clusters
from app.perfmodel import scaling
from app.perfmodel.lab_scaling import LabScaling
from app.perfmodel.profile import Memory
from app.planner import costs as pricing
from app.planner.memory import Fit, fewest, footprint
from app.planner.scale import Scaled, fewest_reaching, link_words, scaled, systems
from app.recommender import reasons as words
from app.recommender.columns import KIND_ORDER, Option
from app.recommender.engine import options
from app.recommender.guess import Guess
from app.recommender.like_for_like import eager_gpus
from app.recommender.power import capped
from app.recommender.reasons import Why, why

MAX_REJECTED = 200
GB = 1e9


@dataclass(slots=True)
class Sized:
    """One option taken to its device count, in plain numbers (made into a wire model only if listed)."""

    option: Option
    estimate: Guess
    """One device's, capped under a per-device power budget."""
    price: Price | None
    fit: Fit | None
    found: Scaled
    index: int
    systems: int
    latency_p99_ms: float | None
    bill: pricing.Bill
    job_hours: float | None
    error_pct: float
    notes: list[Why] = field(default_factory=list)

    @property
    def devices(self) -> int:
        return int(self.found.devices[self.index])

    @property
    def throughput(self) -> float:
        return float(self.found.throughput[self.index])

    @property
    def system_power_w(self) -> float | None:
        power = self.estimate.power_w
        return None if power is None else power * self.devices

    @property
    def energy_per_sample_j(self) -> float | None:
        power = self.system_power_w
        return None if power is None else power / self.throughput


@dataclass(slots=True)
class Refused:
    option: Option
    devices: int
    reasons: list[Why]


def plan(session: Session, request: PlanRequest) -> Plan:
    request, declared = with_declared(session, request)
    spec = WorkloadSpec(
        workload=request.workload,
        custom=request.custom,
        task=request.task,
        batch_size=request.batch_size,
        scope=request.scope,
        constraints=Constraints(
            precisions=request.precisions, runtimes=request.runtimes, device_kinds=request.device_kinds
        ),
    )
    table, notes = options(session, spec)
    rows = np.flatnonzero(table.allowed(request.precisions, request.runtimes, device_kinds=request.device_kinds))
    notes += eager_gpus(spec, table, rows)
    needed = needed_throughput(request)
    memory: dict[Precision, Memory | None] = {}
    sized: list[Sized] = []
    refused: list[Refused] = []
    for row in rows.tolist():
        option = table.options[row]
        precision = option.config.precision
        if precision not in memory:
            memory[precision] = footprint(request.name, request.custom, request.task, precision)
        price = table.prices[int(table.hardware_index[row])]
        outcome = _size(request, option, price, memory[precision], needed, table.lab_scaling)
        if isinstance(outcome, Sized):
            sized.append(outcome)
        else:
            refused.append(outcome)
    key = _key(request)
    best: dict[tuple[str, str, Precision], Sized] = {}
    for s in sized:
        at = (s.option.hardware.key, s.option.config.runtime, s.option.config.precision)
        if at not in best or key(s) < key(best[at]):
            best[at] = s
    ranked = sorted(best.values(), key=key)
    if len(ranked) > request.limit:
        notes.append(f"{len(ranked)} feasible plans; the best {request.limit} are listed (raise limit for more)")
    refused = _unplanned(refused, best)
    if len(refused) > MAX_REJECTED:
        notes.append(f"{len(refused)} candidates rejected; the {MAX_REJECTED} fastest are listed")
    return Plan(
        query=request,
        candidates=[_candidate(rank, s, request) for rank, s in enumerate(ranked[: request.limit], start=1)],
        rejected=[_rejection(r) for r in refused[:MAX_REJECTED]],
        assumptions=assumptions(request, declared),
        notes=notes,
    )


def _unplanned(refused: list[Refused], planned: dict[tuple[str, str, Precision], Sized]) -> list[Refused]:
    """One rejection per hardware x runtime x precision that has no plan at any batch (its fastest
    batch's reasons), fastest first: a part planned at batch 256 is not also listed as too large at 928."""
    first: dict[tuple[str, str, Precision], Refused] = {}
    for r in sorted(refused, key=lambda r: -r.option.estimate.throughput_samples_per_s):
        at = (r.option.hardware.key, r.option.config.runtime, r.option.config.precision)
        if at not in planned:
            first.setdefault(at, r)
    return list(first.values())


def needed_throughput(request: PlanRequest) -> float | None:
    """Samples/s all devices together must reach for the target; None: no throughput target."""
    target = request.target
    if target.throughput_samples_per_s is not None:
        return target.throughput_samples_per_s
    if target.serving is not None:
        return target.serving.request_rate_per_s
    job = target.job
    if job is not None and job.deadline_hours is not None:
        return job.samples / (job.deadline_hours * 3600)
    return None


def with_declared(session: Session, request: PlanRequest) -> tuple[PlanRequest, ClusterRead | None]:
    """The request with a declared cluster's figures in place of the described ones: its network, its
    largest member's devices per system, and (scope owned: the lab's own machines) its device count."""
    name = request.cluster.declared
    if name is None:
        return request, None
    found = clusters.to_read(clusters.get(session, name))
    most = request.cluster.max_devices
    if request.scope is Scope.owned:
        most = min(most, found.devices)
    cluster = request.cluster.model_copy(
        update={"network_gb_s": found.network_gb_s, "devices_per_system": found.devices_per_system, "max_devices": most}
    )
    return request.model_copy(update={"cluster": cluster}), found


def _size(
    request: PlanRequest,
    option: Option,
    price: Price | None,
    memory: Memory | None,
    needed: float | None,
    lab: LabScaling,
) -> Sized | Refused:
    """The option at the fewest devices that hold the model and reach ``needed`` samples/s, or why not."""
    hardware, config = option.hardware, option.config
    at = {"hardware": hardware.ref.name, "batch_size": config.batch_size}
    estimate = option.estimate
    budget = request.power_budget_w
    if (budget is not None or request.system_power_budget_w is not None) and estimate.power_w is None:
        return Refused(option, 1, [why(ReasonCode.power_unknown, hardware=hardware.ref.name)])
    if budget is not None and estimate.power_w is not None and estimate.power_w > budget:
        lowered = capped(hardware, estimate, budget)
        if lowered is None:
            basis = estimate.power_basis.value if estimate.power_basis is not None else None
            return Refused(
                option,
                1,
                [why(ReasonCode.over_power_budget, **at, power_w=estimate.power_w, power_basis=basis, budget_w=budget)],
            )
        estimate = lowered
    part = hardware.spec
    capacity = part.memory_gb * GB if part is not None and part.kind == "gpu" and part.memory_gb else None
    max_devices = request.cluster.max_devices
    fit = None
    if memory is not None:
        fit = fewest(memory, config.batch_size, capacity, max_devices)
        if fit is None:
            assert capacity is not None
            needed_gb = memory.at(config.batch_size) / GB
            return Refused(
                option, 1, [why(ReasonCode.out_of_memory, **at, needed_gb=needed_gb, memory_gb=capacity / GB)]
            )
    found = scaled(
        task=request.task,
        single_throughput=estimate.throughput_samples_per_s,
        batch=config.batch_size,
        fit=fit or Fit(1, math.nan, math.nan),
        memory=memory,
        precision=config.precision,
        hardware=part,
        cluster=request.cluster,
        workload=request.workload,
        lab=lab,
        needed=needed,
    )
    index = fewest_reaching(found, needed)
    if index is None:
        assert needed is not None
        return Refused(option, int(found.devices[-1]), [_short(request, found, needed, at)])
    devices = int(found.devices[index])
    latency = _latency(request, estimate, config.batch_size, devices)
    slo = request.target.serving.latency_p99_slo_ms if request.target.serving is not None else None
    if slo is not None and (latency is None or latency > slo):
        code = ReasonCode.latency_unknown if latency is None else ReasonCode.over_latency_slo
        return Refused(option, devices, [why(code, **at, latency_p99_ms=latency, slo_ms=slo)])
    n_systems = systems(devices, part, request.cluster)
    system_power = estimate.power_w * devices if estimate.power_w is not None else None
    against = _system_limits(request, option, price, devices, n_systems, system_power, estimate)
    if against:
        return Refused(option, devices, against)
    owned = pricing.bill(
        request.costs,
        devices=devices,
        systems=n_systems,
        price_usd=price.usd if price is not None else None,
        system_power_w=system_power,
        cloud_usd_per_device_hour=request.costs.cloud_usd_per_device_hour.get(part.id) if part is not None else None,
    )
    job = request.target.job
    throughput = float(found.throughput[index])
    hours = job.hours_at(throughput) if job is not None else None
    result = Sized(
        option,
        estimate,
        price,
        fit,
        found,
        index,
        n_systems,
        latency,
        owned,
        hours,
        _error_pct(estimate, found, devices),
    )
    result.notes = _notes(result, request)
    return result


def _short(request: PlanRequest, found: Scaled, needed: float, at: dict[str, object]) -> Why:
    """Why even the most devices allowed do not reach the target."""
    most, reached = int(found.devices[-1]), float(found.throughput[-1])
    job = request.target.job
    if job is not None and job.deadline_hours is not None:
        hours = job.hours_at(reached)
        return why(ReasonCode.misses_deadline, **at, devices=most, hours=hours, deadline_hours=job.deadline_hours)
    return why(
        ReasonCode.too_many_devices,
        **at,
        devices=most,
        system_throughput_samples_per_s=reached,
        needed_samples_per_s=needed,
    )


def _latency(request: PlanRequest, estimate: Guess, batch: int, devices: int) -> float | None:
    """Inference p99 latency: the batch's own, plus (serving) the time to gather a batch of requests
    at each device's share of the request rate."""
    if request.task is not Task.infer or estimate.latency_p99_ms is None:
        return None
    serving = request.target.serving
    if serving is None:
        return estimate.latency_p99_ms
    return estimate.latency_p99_ms + (batch - 1) / (serving.request_rate_per_s / devices) * 1000


def _system_limits(
    request: PlanRequest,
    option: Option,
    price: Price | None,
    devices: int,
    n_systems: int,
    system_power: float | None,
    estimate: Guess,
) -> list[Why]:
    hardware, config = option.hardware, option.config
    at = {"hardware": hardware.ref.name, "batch_size": config.batch_size}
    found = []
    budget = request.system_power_budget_w
    if budget is not None and system_power is not None and system_power > budget:
        basis = estimate.power_basis.value if estimate.power_basis is not None else None
        found.append(
            why(
                ReasonCode.over_system_power_budget,
                **at,
                devices=devices,
                system_power_w=system_power,
                power_basis=basis,
                budget_w=budget,
            )
        )
    if request.max_price_usd is not None:
        if price is None:
            found.append(why(ReasonCode.price_unknown, hardware=hardware.ref.name, catalog_id=hardware.ref.catalog_id))
        else:
            systems_usd = n_systems * request.costs.system_usd
            total = devices * price.usd + systems_usd
            if total > request.max_price_usd:
                found.append(
                    why(
                        ReasonCode.over_price,
                        devices=devices,
                        price_usd=price.usd,
                        price_label=price.label,
                        systems=n_systems,
                        systems_usd=systems_usd,
                        total_usd=total,
                        max_price_usd=request.max_price_usd,
                    )
                )
    return found


def _error_pct(estimate: Guess, found: Scaled, devices: int) -> float:
    """One device's band, widened across devices by the scaling model's out-of-sample band (training)."""
    band = scaling.shipped().band
    if devices == 1 or found.gradient_bytes == 0 or band is None:
        return estimate.error_pct
    return math.hypot(estimate.error_pct, math.expm1(band) * 100)


def _notes(s: Sized, request: PlanRequest) -> list[Why]:
    notes = []
    at = {"hardware": s.option.hardware.ref.name, "batch_size": s.option.config.batch_size}
    if s.fit is not None and s.fit.shards > 1:
        notes.append(
            why(
                ReasonCode.sharded,
                **at,
                parallelism=s.found.parallelism,
                shards=s.fit.shards,
                whole_gb=s.fit.whole_bytes / GB,
                per_device_gb=s.fit.per_device_bytes / GB,
            )
        )
    if s.devices > 1 and s.found.gradient_bytes > 0:
        notes += [
            w for w in s.found.lab if w.code is not ReasonCode.lab_scaling_measured or w.figures["devices"] == s.devices
        ]
        notes.append(
            why(
                ReasonCode.data_parallel,
                **at,
                devices=s.devices,
                link=link_words(s.found, s.devices, request.cluster),
                gradient_mb=s.found.gradient_bytes / 1e6,
                efficiency=s.throughput / (s.devices * s.estimate.throughput_samples_per_s),
            )
        )
    return notes


def _key(request: PlanRequest) -> Callable[[Sized], tuple[float, ...]]:
    """Best first under the objective, then measured before modelled, then the fastest."""
    inf = math.inf

    def cost(s: Sized) -> float:
        total = s.bill.total_usd
        return total if total is not None else inf

    first: dict[PlanObjective, Callable[[Sized], float]] = {
        PlanObjective.cheapest: cost,
        PlanObjective.fastest: lambda s: -s.throughput,
        PlanObjective.least_energy: lambda s: s.energy_per_sample_j if s.energy_per_sample_j is not None else inf,
    }
    by = first[request.objective]
    return lambda s: (by(s), -KIND_ORDER[s.estimate.kind], -s.throughput)


def _config(option: Option) -> dict[str, object]:
    return {
        "hardware": option.hardware.ref,
        "runtime": option.config.runtime,
        "precision": option.config.precision,
        "batch_size": option.config.batch_size,
    }


def _candidate(rank: int, s: Sized, request: PlanRequest) -> PlanCandidate:
    part = s.option.hardware.spec
    job = None
    if s.job_hours is not None:
        job = pricing.job_cost(s.bill, request.costs, s.job_hours, s.system_power_w)
    return PlanCandidate(
        **_config(s.option),  # type: ignore[arg-type]
        rank=rank,
        devices=s.devices,
        systems=s.systems,
        parallelism=s.found.parallelism if s.devices > 1 else "single",
        link=link_words(s.found, s.devices, request.cluster),
        estimate=s.estimate.to_contract(),
        throughput_samples_per_s=s.throughput,
        error_pct=s.error_pct,
        scaling_efficiency=s.throughput / (s.devices * s.estimate.throughput_samples_per_s),
        latency_p99_ms=s.latency_p99_ms,
        memory_needed_gb=s.fit.per_device_bytes / GB if s.fit is not None else None,
        memory_gb=part.memory_gb if part is not None and part.kind == "gpu" else None,
        power_w=s.estimate.power_w,
        system_power_w=s.system_power_w,
        energy_per_sample_j=s.energy_per_sample_j,
        price=s.price,
        costs=s.bill.to_contract(),
        job=job,
        cost_over_time=pricing.over_time(s.bill),
        notes=[words.to_reason(n) for n in s.notes],
    )


def _rejection(r: Refused) -> PlanRejection:
    return PlanRejection(
        **_config(r.option),  # type: ignore[arg-type]
        devices=r.devices,
        reasons=[words.to_reason(w) for w in r.reasons],
    )


def assumptions(request: PlanRequest, declared: ClusterRead | None = None) -> list[str]:
    c, cluster = request.costs, request.cluster
    fitted = scaling.shipped()
    p = fitted.params
    said = [] if declared is None else [_declared_words(declared, request.scope)]
    said += [
        f"ownership period {c.period_years:g} years, devices running {c.utilisation:.0%} of it",
        f"electricity ${c.electricity_usd_per_kwh:g}/kWh on the devices' own draw (hosts, cooling and power "
        "conversion not counted unless hosting_usd_per_kw_year is set)",
        f"hosting ${c.hosting_usd_per_kw_year:g} per kW-year; ${c.system_usd:,.0f} per system on top of its devices",
        f"{cluster.devices_per_system} GPUs per system (a CPU is a system of its own); network "
        f"{cluster.network_gb_s:g} GB/s per device between systems; at most {cluster.max_devices} devices",
        "prices: the catalog's (a dated quote, a price the lab set, or the release price where that is all there "
        "is); a part without one has no purchase or total cost and ranks last when cheapest is asked",
        "training is data-parallel, each device at the listed batch: step = one device's step + the ring "
        f"all-reduce it cannot hide (link efficiency {p.link_efficiency:.2f}, overlap {p.overlap:.2f}, "
        f"{p.hop_s * 1000:.2f} ms per hop, fitted on {fitted.cases} Lambda multi-GPU rows; docs/ACCURACY.md)",
        "memory: weights, activations at the batch and, training, FP32 gradients and SGD momentum as the zoo's "
        "recipe (an optimiser with more state, Adam say, needs more); a model one device cannot hold is sharded "
        "(training: ZeRO-3/FSDP, 1.5x the all-reduce's traffic; inference: a pipeline of balanced stages)",
        "inference devices serve independent requests: N devices give N times one device's throughput",
    ]
    said.append(
        "the lab's own data-parallel runs (devices > 1, with their measured scaling efficiency) calibrate the "
        "links they crossed: a part's NVLink or PCIe, a declared cluster's network; a count the lab measured for "
        "the same config takes its measured efficiency"
    )
    if request.target.serving is not None:
        said.append("serving latency = the batch's p99 latency + the time to gather a batch at each device's share")
    if c.cloud_usd_per_device_hour:
        said.append("cloud: the given $/device-hour for the same running hours, nothing else (storage, egress)")
    return said


def _declared_words(found: ClusterRead, scope: Scope) -> str:
    over = f"{found.interconnect}, " if found.interconnect else ""
    bound = f"; scope owned: at most its {found.devices} devices" if scope is Scope.owned else ""
    return (
        f"declared cluster {found.name}: {len(found.machines)} machines, {over}{found.network_gb_s:g} GB/s per device "
        f"between them, up to {found.devices_per_system} devices in one{bound}"
    )
