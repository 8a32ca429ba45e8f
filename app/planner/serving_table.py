"""A ServingPlan as text for a terminal: per option the devices, latencies, tokens/s and costs; the
rejected with their memory figures; the assumptions."""

from __future__ import annotations

from app.contracts import ServingPlan


def _number(value: float | None, fmt: str = ",.0f") -> str:
    return "-" if value is None else format(value, fmt)


def render(answer: ServingPlan, *, rejected: int = 10) -> str:
    q = answer.query
    lines = [
        f"{q.model_name}: {answer.shape.parameters / 1e9:,.2f} B parameters, prompt {q.prompt_tokens:,} + output "
        f"{q.output_tokens:,} tokens",
    ]
    header = (
        f"{'#':>3} {'hardware':<30} {'prec':<5} {'tp':>3} {'copies':>6} {'dev':>4} {'batch':>5} {'TTFT ms':>9} "
        f"{'TPOT ms':>8} {'tok/s':>9} {'±%':>4} {'GB/dev':>7} {'of GB':>6} {'tok/J':>7} {'$/Mtok':>8} "
        f"{'cloud $/Mtok':>12}"
    )
    lines += [header, "-" * len(header)]
    for c in answer.candidates:
        lines.append(
            f"{c.rank:>3} {c.hardware.name[:30]:<30} {c.precision.value:<5} {c.tensor_parallel:>3} {c.replicas:>6} "
            f"{c.devices:>4} {c.batch_per_replica:>5} {c.ttft_ms:>9,.1f} {c.tpot_ms:>8,.2f} "
            f"{c.output_tokens_per_s:>9,.1f} {c.error_pct:>4.0f} {c.memory_needed_gb:>7,.1f} "
            f"{_number(c.memory_gb):>6} {_number(c.output_tokens_per_j, ',.3g'):>7} "
            f"{_number(c.usd_per_million_tokens, ',.3f'):>8} {_number(c.cloud_usd_per_million_tokens, ',.3f'):>12}"
        )
    if not answer.candidates:
        lines.append("(no part serves this within the SLOs and constraints)")
    else:
        lines.extend(f"best: {note.text}" for note in answer.candidates[0].notes)
    if answer.rejected:
        lines.append(f"\nrejected ({len(answer.rejected)}):")
        for r in answer.rejected[:rejected]:
            lines.append(f"  {r.hardware.name} {r.precision.value}: " + "; ".join(x.text for x in r.reasons))
        if len(answer.rejected) > rejected:
            lines.append(f"  ... and {len(answer.rejected) - rejected} more (--json lists all)")
    lines.append("\nassumptions:")
    lines.extend(f"  - {a}" for a in answer.assumptions)
    lines.extend(f"note: {note}" for note in answer.notes)
    return "\n".join(lines)
