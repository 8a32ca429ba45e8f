"""A Recommendation as text for a terminal: the ranked table, the rejected with reasons, the notes."""

from __future__ import annotations

from collections.abc import Sequence

from app.contracts import Candidate, EstimateKind, PlanRejection, Recommendation, Rejection
from app.recommender.reasons import first_names

KIND_MARK = {
    EstimateKind.measured: "measured",
    EstimateKind.interpolated: "interp.",
    EstimateKind.predicted: "predicted",
}


def _where(c: Candidate) -> str:
    return f"{c.hardware.machine_name} {c.hardware.device}" if c.hardware.owned else "catalog"


def _number(value: float | None, fmt: str = ",.1f") -> str:
    return "-" if value is None else format(value, fmt)


def _cost(c: Candidate) -> str:
    """The cost per million samples, marked when its price is only a release price."""
    mark = "+" if c.price is not None and c.price.basis == "release" else ""
    return _number(c.cost_per_million_samples_usd, ",.2f") + mark


def _prices(candidates: list[Candidate]) -> list[str]:
    """Which prices are release prices, and which hardware has none: a cost is never silently made up."""
    release = {c.hardware.name: c.price.label for c in candidates if c.price is not None and c.price.basis == "release"}
    missing = sorted({c.hardware.name for c in candidates if c.price is None})
    lines = []
    if release:
        priced = [f"{n} ({w})" for n, w in sorted(release.items())]
        lines.append(f"+ priced at its release price: {first_names(priced, sep='; ')}")
    if missing:
        lines.append(
            f"no price for {first_names(missing)}: no cost figure (set price_usd: PUT /api/v1/catalog/<id>; "
            "--json lists every candidate's price)"
        )
    return lines


def rejected_lines(rejected: Sequence[Rejection | PlanRejection], shown: int) -> list[str]:
    """The first ``shown`` rejections with their reasons in words (a recommendation's or a plan's)."""
    if not rejected:
        return []
    lines = [f"\nrejected ({len(rejected)}):"]
    for r in rejected[:shown]:
        why = "; ".join(reason.text for reason in r.reasons)
        lines.append(f"  {r.hardware.name} {r.runtime} {r.precision.value} batch {r.batch_size}: {why}")
    if len(rejected) > shown:
        lines.append(f"  ... and {len(rejected) - shown} more (--json lists all)")
    return lines


def render(answer: Recommendation, *, rejected: int = 10) -> str:
    lines = []
    header = (
        f"{'#':>3} {'hardware':<32} {'where':<22} {'runtime':<16} {'prec':<5} {'batch':>6} {'thr':>4} "
        f"{'samples/s':>12} {'±%':>4} {'p99 ms':>8} {'W':>6} {'per W':>7} {'$/M':>8} {'estimate':<9} src"
    )
    lines.append(header)
    lines.append("-" * len(header))
    for c in answer.candidates:
        e = c.estimate
        power = _number(e.power_w, ",.0f") + ("*" if e.power_basis and e.power_basis.value != "measured" else "")
        lines.append(
            f"{c.rank:>3} {c.hardware.name[:32]:<32} {_where(c)[:22]:<22} {c.runtime[:16]:<16} {c.precision.value:<5} "
            f"{c.batch_size:>6} {c.threads or '-':>4} {e.throughput_samples_per_s:>12,.1f} {e.error_pct:>4.0f} "
            f"{_number(e.latency_p99_ms):>8} {power:>6} {_number(c.throughput_per_w, ',.2f'):>7} "
            f"{_cost(c):>8} {KIND_MARK[e.kind]:<9} {e.source}"
            + ("  pareto" if c.pareto else "")
            + (f"  variant {c.variant}~" if c.variant else "")
        )
    if not answer.candidates:
        lines.append("(no candidate meets the constraints)")
    lines.append("* power not measured: TDP, a TDP share, or a cap (see each explanation with --json)")
    if answer.query.objective == "assured_throughput":
        lines.append("ranked by the low end of each band: samples/s / (1 + ±%/100)")
    if any(c.variant for c in answer.candidates):
        lines.append(
            f"~ a model variant, not the original model: {next(c.caveat for c in answer.candidates if c.caveat)}"
        )
    lines.extend(_prices(answer.candidates))
    if answer.candidates:
        lines.append(f"best: {answer.candidates[0].estimate.explanation}")
    lines.extend(rejected_lines(answer.rejected, rejected))
    for note in answer.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
