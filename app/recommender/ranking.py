"""Candidates against the constraints (rejected with reasons, or offered power-capped), ranked by the
objective, the Pareto front of throughput vs power marked; only what is listed becomes wire models."""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from app.bench.variants.base import CAVEAT
from app.contracts import Candidate, Price, ReasonCode, Recommendation, Rejection, Scope, WorkloadSpec
from app.perfmodel import power as power_model
from app.recommender import reasons as words
from app.recommender.columns import Columns, Floats, Ints, Option
from app.recommender.devices import Together, modelled
from app.recommender.guess import Guess
from app.recommender.like_for_like import eager_gpus
from app.recommender.objectives import MISSING, Scored, objective
from app.recommender.power import capped
from app.recommender.reasons import Why, why

Bools = npt.NDArray[np.bool_]
SECONDS_PER_YEAR = 365.25 * 86400
MAX_REJECTED = 200
COST_OBJECTIVE = "cost_per_million_samples"


def _limits(spec: WorkloadSpec) -> float | None:
    """The per-device power budget: the tighter of the device budget and the system budget shared out."""
    c = spec.constraints
    shares = [
        b
        for b in (c.power_budget_w, c.system_power_budget_w / c.device_count if c.system_power_budget_w else None)
        if b
    ]
    return min(shares) if shares else None


def _reasons(spec: WorkloadSpec, option: Option, price: Price | None, system_throughput: float) -> list[Why]:
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
    if c.min_throughput_samples_per_s is not None and system_throughput < c.min_throughput_samples_per_s:
        reasons.append(
            why(
                ReasonCode.under_min_throughput,
                **at,
                devices=n,
                system_throughput_samples_per_s=system_throughput,
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


def _score(spec: WorkloadSpec, e: Guess, price: Price | None, system_throughput: float, assured: float) -> Scored:
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
    return Scored(throughput, system_throughput, assured, e.latency_p99_ms, e.power_w, per_w, joules, cost)


OWNED_ONLY = (
    "only the lab's own hardware was asked (scope owned; the CLI's --owned), and none of it meets the constraints: "
    "scope catalog (the default) adds every catalog part nobody here owns yet, predicted where nothing measured it"
)


def rank(spec: WorkloadSpec, table: Columns, notes: list[str]) -> Recommendation:
    """The answer from the table's columns: constraints, power caps, scores and the objective's order
    are array arithmetic over every row; only the listed candidates and rejections become models."""
    c = spec.constraints
    allowed = table.allowed(
        c.precisions, c.runtimes, c.variants, allow_variants=spec.allow_variants, device_kinds=c.device_kinds
    )
    figures = Figures(table.throughput, table.error_pct, table.power_w, table.latency_p99_ms, table.memory_gb)
    together = Together(spec, table)
    reasons = rejected_by(spec, table, figures, together) & allowed
    budget = _limits(spec)
    capped_rows = np.zeros(len(table), dtype=np.bool_)
    if budget is not None:
        power_only = reasons & ~rejected_by(spec, table, figures, together, power=False)
        figures, capped_rows = capped_figures(table, figures, budget, power_only)
        capped_rows &= ~rejected_by(spec, table, figures, together)
    feasible = np.flatnonzero((allowed & ~reasons) | capped_rows)
    scored = scores(spec, table, figures, feasible, together)
    order = _order(spec, scored, table.kind_order[feasible])
    front = pareto_front(scored)
    candidates = [
        _listed_candidate(
            spec, table, together, int(feasible[i]), bool(capped_rows[feasible[i]]), budget, rank, bool(front[i])
        )
        for rank, i in enumerate(order[: spec.limit].tolist(), start=1)
    ]
    _note_unpriced(spec, table, feasible, notes)
    notes += eager_gpus(spec, table, feasible)
    if not len(feasible) and spec.scope is Scope.owned:
        notes.append(OWNED_ONLY)
    if modelled(spec):
        notes.append(
            f"{spec.constraints.device_count} devices train data-parallel: the system throughput is the scaling "
            "model's (one device's step plus the gradient all-reduce it cannot hide, over the part's NVLink or "
            "PCIe), not N times one device; POST /api/v1/plans finds the device count for a target"
        )
        notes += table.lab_scaling.words()
    if len(feasible) > spec.limit:
        notes.append(f"{len(feasible)} feasible candidates; the best {spec.limit} are listed (raise limit for more)")
    out = np.flatnonzero(reasons)
    out = out[np.argsort(-table.throughput[out], kind="stable")]
    if len(out) > MAX_REJECTED:
        notes.append(f"{len(out)} candidates rejected; the {MAX_REJECTED} fastest are listed")
    listed = [_rejection(spec, table, together, int(i)) for i in out[:MAX_REJECTED].tolist()]
    return Recommendation(query=spec, candidates=candidates, rejected=listed, notes=notes)


class Figures(NamedTuple):
    """The estimate's figures of every row (NaN where unknown): as estimated, or as capped."""

    throughput: Floats
    error_pct: Floats
    power_w: Floats
    latency_p99_ms: Floats
    memory_gb: Floats


def rejected_by(spec: WorkloadSpec, table: Columns, f: Figures, together: Together, *, power: bool = True) -> Bools:
    """Rows ``_reasons`` has a reason against (with ``power=False``: a reason other than over a power
    budget, which a cap cannot cure). The same comparisons, on columns."""
    c, n = spec.constraints, spec.constraints.device_count
    known_power = ~np.isnan(f.power_w)
    out = np.zeros(len(table), dtype=np.bool_)
    if c.power_budget_w is not None or c.system_power_budget_w is not None:
        out |= ~known_power
        if power and c.power_budget_w is not None:
            out |= known_power & (f.power_w > c.power_budget_w)
        if power and c.system_power_budget_w is not None:
            out |= known_power & (f.power_w * n > c.system_power_budget_w)
    if c.latency_p99_slo_ms is not None:
        out |= np.isnan(f.latency_p99_ms) | (f.latency_p99_ms > c.latency_p99_slo_ms)
    if c.min_throughput_samples_per_s is not None:
        out |= together(np.arange(len(table)), f.throughput) < c.min_throughput_samples_per_s
    out |= f.memory_gb > table.device_memory_gb  # NaN on either side: no reason
    if c.max_price_usd is not None:
        out |= np.isnan(table.price_usd) | (table.price_usd * n > c.max_price_usd)
    return out


def capped_figures(table: Columns, f: Figures, budget_w: float, rows: Bools) -> tuple[Figures, Bools]:
    """The figures with the GPUs of ``rows`` capped at the budget where they can be (``capped`` in
    app/recommender/power.py, on columns), and which rows were."""
    can = rows & (table.cap_min_w <= budget_w) & (budget_w < f.power_w)
    factor = np.ones(len(table))
    cap = power_model.shipped().cap
    factor[can] = np.array([(budget_w / w) ** cap.exponent for w in f.power_w[can].tolist()], dtype=np.float64)
    latency = np.where((f.latency_p99_ms != 0) & ~np.isnan(f.latency_p99_ms), f.latency_p99_ms / factor, np.nan)
    lowered = Figures(
        np.where(can, f.throughput * factor, f.throughput),
        np.where(can, f.error_pct + cap.extra_error_pct, f.error_pct),
        np.where(can, budget_w, f.power_w),
        np.where(can, latency, f.latency_p99_ms),
        np.where(can, np.nan, f.memory_gb),
    )
    return lowered, can


class ScoredColumns(NamedTuple):
    """``Scored`` of many candidates: each field a column, NaN where the figure is unknown."""

    throughput: Floats
    system_throughput: Floats
    assured_throughput: Floats
    latency_p99_ms: Floats
    power_w: Floats
    throughput_per_w: Floats
    energy_per_sample_j: Floats
    cost_per_million_usd: Floats


def scores(spec: WorkloadSpec, table: Columns, f: Figures, rows: Ints, together: Together) -> ScoredColumns:
    """``_score`` of the given rows, with the same arithmetic in the same order."""
    throughput, power = f.throughput[rows], f.power_w[rows]
    price = table.price_usd[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_w = np.where((power != 0) & ~np.isnan(power), throughput / power, np.nan)
        joules = power / throughput
        per_second = (
            price / (spec.amortisation_years * SECONDS_PER_YEAR) + power / 1000 / 3600 * spec.electricity_usd_per_kwh
        )
        cost = per_second * 1e6 / throughput
    cost = np.where(np.isfinite(cost), cost, np.nan)
    system = together(rows, throughput)
    assured = together(rows, throughput / (1 + f.error_pct[rows] / 100))  # Guess.throughput_low
    return ScoredColumns(throughput, system, assured, f.latency_p99_ms[rows], power, per_w, joules, cost)


def _order(spec: WorkloadSpec, scored: ScoredColumns, kind_order: Ints) -> Ints:
    """Best first by the objective's key, then measured before modelled, then throughput; ties keep
    the table's order (as Python's stable sort with ``reverse=True`` does)."""
    size = len(scored.throughput)
    keys = []
    # an objective's key is arithmetic on the figures: it takes the columns as it takes one candidate's
    for k in objective(spec.objective).key(cast(Scored, scored)):
        column = np.broadcast_to(np.asarray(k, dtype=np.float64), (size,))
        keys.append(np.where(np.isnan(column), MISSING, column))
    columns = [*keys, kind_order.astype(np.float64), scored.throughput]
    return np.lexsort([-k for k in reversed(columns)])


def _listed_candidate(
    spec: WorkloadSpec,
    table: Columns,
    together: Together,
    row: int,
    was_capped: bool,
    budget: float | None,
    rank: int,
    on_front: bool,
) -> Candidate:
    option = table.options[row]
    if was_capped:
        assert budget is not None
        lower = capped(option.hardware, option.estimate, budget)
        assert lower is not None
        option = option._replace(estimate=lower)
    price = table.prices[int(table.hardware_index[row])]
    system = together.one(row, option.estimate.throughput_samples_per_s)
    assured = together.one(row, option.estimate.throughput_low)
    return _candidate(rank, option, _score(spec, option.estimate, price, system, assured), price, spec, on_front)


def pareto_front(scored: ScoredColumns) -> Bools:
    """For every feasible row: True where no other row is at least as fast for at most the power and
    strictly better in one of the two (unknown power counts as infinite; equal rows share their place).
    In order of power, then fastest first, a row is dominated exactly when a row before its group of
    equal rows is at least as fast."""
    throughput = scored.throughput
    power = np.where(np.isnan(scored.power_w), np.inf, scored.power_w)
    order = np.lexsort((-throughput, power))
    t, p = throughput[order], power[order]
    size = len(order)
    if size == 0:
        return np.zeros(0, dtype=np.bool_)
    starts = np.ones(size, dtype=np.bool_)
    starts[1:] = (t[1:] != t[:-1]) | (p[1:] != p[:-1])
    group_start = np.maximum.accumulate(np.where(starts, np.arange(size), 0))
    fastest_before = np.concatenate(([-np.inf], np.maximum.accumulate(t)[:-1]))
    front = np.empty(size, dtype=np.bool_)
    front[order] = ~(fastest_before[group_start] >= t)
    return front


def _note_unpriced(spec: WorkloadSpec, table: Columns, feasible: Ints, notes: list[str]) -> None:
    """Under a cost objective, say which hardware ranks last for want of a price."""
    if spec.objective != COST_OBJECTIVE:
        return
    parts = np.unique(table.hardware_index[feasible])
    names = sorted({table.hardware[i].ref.name for i in parts.tolist() if table.prices[i] is None})
    if names:
        notes.append(
            f"no price for {words.first_names(names)}: ranked after every priced candidate, with no cost figure "
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
        "variant": config.variant,
        "caveat": CAVEAT if config.variant is not None else None,
        "estimate": option.estimate.to_contract(),
    }


def _rejection(spec: WorkloadSpec, table: Columns, together: Together, row: int) -> Rejection:
    option = table.options[row]
    system = together.one(row, option.estimate.throughput_samples_per_s)
    reasons = _reasons(spec, option, table.prices[int(table.hardware_index[row])], system)
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
