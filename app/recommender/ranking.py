"""Candidates against the constraints (rejected with reasons, or offered power-capped), ranked by the
objective, the Pareto front of throughput vs power marked; only what is listed becomes wire models."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from app.catalog.price import price_of
from app.contracts import Candidate, EstimateKind, Price, ReasonCode, Recommendation, Rejection, WorkloadSpec
from app.recommender import reasons as words
from app.recommender.estimators import Config
from app.recommender.evidence import Hardware
from app.recommender.guess import Guess
from app.recommender.objectives import Scored, objective, pareto
from app.recommender.power import capped
from app.recommender.reasons import Why, why

POWER_CODES = frozenset({ReasonCode.over_power_budget, ReasonCode.over_system_power_budget})
"""Rejections a power cap may cure: over a budget, with the power known."""
KIND_ORDER = {EstimateKind.measured: 2, EstimateKind.interpolated: 1, EstimateKind.predicted: 0}
SECONDS_PER_YEAR = 365.25 * 86400
MAX_REJECTED = 200
COST_OBJECTIVE = "cost_per_million_samples"


class Option(NamedTuple):
    """One hardware x config with its estimate (a tuple: there are tens of thousands per answer)."""

    hardware: Hardware
    config: Config
    estimate: Guess


def _limits(spec: WorkloadSpec) -> float | None:
    """The per-device power budget: the tighter of the device budget and the system budget shared out."""
    c = spec.constraints
    shares = [
        b
        for b in (c.power_budget_w, c.system_power_budget_w / c.device_count if c.system_power_budget_w else None)
        if b
    ]
    return min(shares) if shares else None


def _reasons(spec: WorkloadSpec, option: Option, price: Price | None) -> list[Why]:
    c, e, hardware = spec.constraints, option.estimate, option.hardware.ref
    n = c.device_count
    at = {"hardware": hardware.name, "batch_size": option.config.batch_size}
    reasons = []
    if c.power_budget_w is not None or c.system_power_budget_w is not None:
        if e.power_w is None:
            reasons.append(why(ReasonCode.power_unknown, hardware=hardware.name, catalog_id=hardware.catalog_id))
        else:
            basis = e.power_basis.value if e.power_basis is not None else None
            if c.power_budget_w is not None and e.power_w > c.power_budget_w:
                reasons.append(
                    why(
                        ReasonCode.over_power_budget,
                        **at,
                        power_w=e.power_w,
                        power_basis=basis,
                        budget_w=c.power_budget_w,
                    )
                )
            if c.system_power_budget_w is not None and e.power_w * n > c.system_power_budget_w:
                reasons.append(
                    why(
                        ReasonCode.over_system_power_budget,
                        **at,
                        devices=n,
                        system_power_w=e.power_w * n,
                        power_basis=basis,
                        budget_w=c.system_power_budget_w,
                    )
                )
    if c.latency_p99_slo_ms is not None:
        if e.latency_p99_ms is None:
            reasons.append(why(ReasonCode.latency_unknown, **at))
        elif e.latency_p99_ms > c.latency_p99_slo_ms:
            reasons.append(
                why(ReasonCode.over_latency_slo, **at, latency_p99_ms=e.latency_p99_ms, slo_ms=c.latency_p99_slo_ms)
            )
    if c.min_throughput_samples_per_s is not None and e.throughput_samples_per_s * n < c.min_throughput_samples_per_s:
        reasons.append(
            why(
                ReasonCode.under_min_throughput,
                **at,
                devices=n,
                system_throughput_samples_per_s=e.throughput_samples_per_s * n,
                min_throughput_samples_per_s=c.min_throughput_samples_per_s,
            )
        )
    part = option.hardware.spec
    if (
        e.memory_gb is not None
        and part is not None
        and part.kind == "gpu"
        and part.memory_gb
        and e.memory_gb > part.memory_gb
    ):
        reasons.append(why(ReasonCode.out_of_memory, **at, needed_gb=e.memory_gb, memory_gb=part.memory_gb))
    if c.max_price_usd is not None:
        if price is None:
            reasons.append(_unpriced(option))
        elif price.usd * n > c.max_price_usd:
            reasons.append(
                why(
                    ReasonCode.over_price,
                    devices=n,
                    price_usd=price.usd,
                    price_label=price.label,
                    total_usd=price.usd * n,
                    max_price_usd=c.max_price_usd,
                )
            )
    return reasons


def _unpriced(option: Option) -> Why:
    hardware = option.hardware.ref
    return why(ReasonCode.price_unknown, hardware=hardware.name, catalog_id=hardware.catalog_id)


class Prices:
    """Each hardware's price by the catalog's one rule (app/catalog/price.py), worked out once per
    hardware however many configs it has; None where the catalog has no price, never a stand-in."""

    def __init__(self) -> None:
        self._known: dict[str, Price | None] = {}

    def __call__(self, hardware: Hardware) -> Price | None:
        if hardware.key not in self._known:
            self._known[hardware.key] = price_of(hardware.spec)
        return self._known[hardware.key]


def _score(spec: WorkloadSpec, e: Guess, price: Price | None) -> Scored:
    throughput = e.throughput_samples_per_s
    per_w = throughput / e.power_w if e.power_w else None
    joules = e.power_w / throughput if e.power_w is not None else None
    cost = None
    if price is not None and e.power_w is not None:
        per_second = (
            price.usd / (spec.amortisation_years * SECONDS_PER_YEAR)
            + e.power_w / 1000 / 3600 * spec.electricity_usd_per_kwh
        )
        cost = per_second * 1e6 / throughput
        cost = cost if math.isfinite(cost) else None
    return Scored(
        throughput, throughput * spec.constraints.device_count, e.latency_p99_ms, e.power_w, per_w, joules, cost
    )


def rank(spec: WorkloadSpec, options: list[Option], notes: list[str]) -> Recommendation:
    budget = _limits(spec)
    feasible: list[tuple[Option, Scored, Price | None]] = []
    rejected: list[tuple[Option, list[Why]]] = []
    price_of_hardware = Prices()
    for option in options:
        price = price_of_hardware(option.hardware)
        reasons = _reasons(spec, option, price)
        if reasons:
            rejected.append((option, reasons))
            power_only = all(r.code in POWER_CODES for r in reasons)
            if budget is not None and power_only:
                lower = capped(option.hardware, option.estimate, budget)
                if lower is not None:
                    option = option._replace(estimate=lower)
                    if not _reasons(spec, option, price):
                        feasible.append((option, _score(spec, option.estimate, price), price))
            continue
        feasible.append((option, _score(spec, option.estimate, price), price))
    key = objective(spec.objective).key
    feasible.sort(key=lambda item: (key(item[1]), KIND_ORDER[item[0].estimate.kind], item[1].throughput), reverse=True)
    front = pareto([(s.throughput, s.power_w if s.power_w is not None else float("inf")) for _, s, _ in feasible])
    candidates = [
        _candidate(rank, option, scored, price, spec, on_front)
        for rank, ((option, scored, price), on_front) in enumerate(zip(feasible, front, strict=True), start=1)
        if rank <= spec.limit
    ]
    _note_unpriced(spec, [(option, price) for option, _, price in feasible], notes)
    if len(feasible) > spec.limit:
        notes.append(f"{len(feasible)} feasible candidates; the best {spec.limit} are listed (raise limit for more)")
    rejected.sort(key=lambda r: r[0].estimate.throughput_samples_per_s, reverse=True)
    if len(rejected) > MAX_REJECTED:
        notes.append(f"{len(rejected)} candidates rejected; the {MAX_REJECTED} fastest are listed")
    listed = [_rejection(option, reasons) for option, reasons in rejected[:MAX_REJECTED]]
    return Recommendation(query=spec, candidates=candidates, rejected=listed, notes=notes)


def _note_unpriced(spec: WorkloadSpec, ranked: list[tuple[Option, Price | None]], notes: list[str]) -> None:
    """Under a cost objective, say which hardware ranks last for want of a price."""
    if spec.objective != COST_OBJECTIVE:
        return
    names = sorted({option.hardware.ref.name for option, price in ranked if price is None})
    if names:
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        notes.append(
            f"no price for {shown}: ranked after every priced candidate, with no cost figure "
            "(set price_usd: PUT /api/v1/catalog/<id>)"
        )


def _listed(option: Option) -> dict[str, Any]:
    """What a candidate and a rejection both say: the hardware, the config, the estimate."""
    config = option.config
    return {
        "hardware": option.hardware.ref,
        "runtime": config.runtime,
        "precision": config.precision,
        "batch_size": config.batch_size,
        "threads": config.threads,
        "estimate": option.estimate.to_contract(),
    }


def _rejection(option: Option, reasons: list[Why]) -> Rejection:
    return Rejection(**_listed(option), reasons=[words.to_reason(r) for r in reasons])


def _candidate(
    rank: int, option: Option, s: Scored, price: Price | None, spec: WorkloadSpec, on_front: bool
) -> Candidate:
    n = spec.constraints.device_count
    return Candidate(
        **_listed(option),
        rank=rank,
        throughput_per_w=s.throughput_per_w,
        energy_per_sample_j=s.energy_per_sample_j,
        price_usd=price.usd if price is not None else None,
        price=price,
        notes=[words.to_reason(_unpriced(option))] if price is None else [],
        cost_per_million_samples_usd=s.cost_per_million_usd,
        system_throughput_samples_per_s=s.system_throughput,
        system_power_w=s.power_w * n if s.power_w is not None else None,
        pareto=on_front,
    )
