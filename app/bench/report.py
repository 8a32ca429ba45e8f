"""Results as a table for people (`hwadvisor bench`)."""

from __future__ import annotations

from app.contracts import Result, ResultStatus, workload_label

HEADER = (
    "workload",
    "runtime",
    "device",
    "prec",
    "batch",
    "thr",
    "result",
    "p50 ms",
    "p99 ms",
    "±CI",
    "n",
    "W",
    "J/sample",
)
KEYS = 6  # the config columns every row has
CI_COLUMN = HEADER.index("±CI")
MIN_CI_ITERATIONS = 6
"""Below six samples no interval from order statistics covers the median with 95% confidence
(all on one side has probability 2 x 0.5^n > 0.05): the harness then reports the samples' range,
which for one sample is a width of zero. The table says n/a rather than a CI it does not have."""
UNSTABLE = " !"
NOTES = {
    UNSTABLE: "'!': the 95% CI of the median did not reach the target within the time budget.",
    "n/a": f"'n/a': fewer than {MIN_CI_ITERATIONS} iterations, too few for a 95% CI of the median.",
}


def _number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if value < 10_000 else f"{value:,.0f}"


def figure_of_merit(result: Result) -> str:
    if result.achieved_tflops is not None:
        return f"{result.achieved_tflops * 1000:,.1f} GFLOP/s"
    if result.bandwidth_gb_per_s is not None:
        return f"{result.bandwidth_gb_per_s:,.1f} GB/s"
    throughput = f"{_number(result.throughput_samples_per_s)} /s"
    if result.scaling_efficiency is not None:
        return f"{throughput} ({result.scaling_efficiency:.0%} scaling)"
    return throughput


def _ci_half_width(r: Result) -> str:
    if r.iterations is not None and r.iterations < MIN_CI_ITERATIONS:
        return "n/a"
    if r.latency_ci95_high_ms is None or r.latency_ci95_low_ms is None or not r.latency_p50_ms:
        return "-"
    percent = (r.latency_ci95_high_ms - r.latency_ci95_low_ms) / 2 / r.latency_p50_ms * 100
    return f"{percent:.1f}%" + ("" if r.stable else UNSTABLE)


def _row(r: Result) -> tuple[str, ...]:
    keys = (
        workload_label(r.workload, r.task) + (f" {r.variant}" if r.variant else ""),
        r.runtime,
        r.device if r.devices == 1 else f"{r.device} x{r.devices}",
        r.precision.value,
        str(r.batch_size),
        str(r.threads or "-"),
    )
    if r.status is not ResultStatus.ok:
        return (*keys, f"{r.status.value}: {r.reason}")
    power = f"{_number(r.mean_power_w)} {r.power_source.value}" if r.mean_power_w is not None else "-"
    return (
        *keys,
        figure_of_merit(r),
        _number(r.latency_p50_ms, 2),
        _number(r.latency_p99_ms, 2),
        _ci_half_width(r),
        str(r.iterations),
        power,
        _number(r.energy_per_sample_j, 3),
    )


def render_results(results: list[Result]) -> str:
    rows = [_row(r) for r in results]
    full = [HEADER, *(row for row in rows if len(row) == len(HEADER))]
    widths = [max(len(row[i]) for row in full) for i in range(len(HEADER))]
    lines = []
    for row in [HEADER, *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:KEYS])] + list(row[KEYS : KEYS + 1])
        cells[-1] = cells[-1].ljust(widths[KEYS]) if len(row) == len(HEADER) else cells[-1]
        cells += [cell.ljust(widths[i]) for i, cell in enumerate(row[KEYS + 1 :], start=KEYS + 1)]
        lines.append("  ".join(cells).rstrip())
    cis = [row[CI_COLUMN] for row in rows if len(row) == len(HEADER)]
    lines += [note for mark, note in NOTES.items() if any(ci.endswith(mark) for ci in cis)]
    return "\n".join(lines)
