"""A Plan as text for a terminal: the ranked plans with devices, time and cost, the rejected with
reasons, the assumptions and the notes."""

from __future__ import annotations

from app.contracts import Plan, PlanCandidate
from app.recommender.table import KIND_MARK, rejected_lines


def _number(value: float | None, fmt: str = ",.0f") -> str:
    return "-" if value is None else format(value, fmt)


def _hours(c: PlanCandidate) -> str:
    return "-" if c.job is None else f"{c.job.time_to_train_hours:,.1f}"


def render(answer: Plan, *, rejected: int = 10) -> str:
    years = answer.query.costs.period_years
    header = (
        f"{'#':>3} {'hardware':<30} {'runtime':<14} {'prec':<5} {'batch':>6} {'dev':>4} {'sys':>3} "
        f"{'samples/s':>11} {'±%':>4} {'eff':>4} {'GB/dev':>7} {'kW':>6} {'train h':>8} "
        f"{'purchase $':>11} {'energy $':>9} {f'total {years:g}y $':>12} {'cloud $':>10} estimate"
    )
    lines = [header, "-" * len(header)]
    for c in answer.candidates:
        k = c.costs
        lines.append(
            f"{c.rank:>3} {c.hardware.name[:30]:<30} {c.runtime[:14]:<14} {c.precision.value:<5} {c.batch_size:>6} "
            f"{c.devices:>4} {c.systems:>3} {c.throughput_samples_per_s:>11,.1f} {c.error_pct:>4.0f} "
            f"{c.scaling_efficiency:>4.0%} {_number(c.memory_needed_gb, ',.1f'):>7} "
            f"{_number(c.system_power_w and c.system_power_w / 1000, ',.2f'):>6} {_hours(c):>8} "
            f"{_number(k.purchase_usd):>11} {_number(k.energy_usd):>9} {_number(k.total_usd):>12} "
            f"{_number(k.cloud_usd):>10} {KIND_MARK[c.estimate.kind]}"
        )
    if not answer.candidates:
        lines.append("(no plan meets the target and the constraints)")
    if answer.candidates:
        best = answer.candidates[0]
        lines.append(f"best: {best.estimate.explanation}")
        lines.extend(f"      {note.text}" for note in best.notes)
    lines.extend(rejected_lines(answer.rejected, rejected))
    lines.append("\nassumptions:")
    lines.extend(f"  - {a}" for a in answer.assumptions)
    lines.extend(f"note: {note}" for note in answer.notes)
    return "\n".join(lines)
