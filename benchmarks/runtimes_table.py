"""The comparison table of docs/BENCHMARKS.md from a RunReport of benchmarks/runtimes_variants.toml.

    hwadvisor bench --suite benchmarks/runtimes_variants.toml --out runtimes.json
    .venv/bin/python -m benchmarks.runtimes_table runtimes.json

One row per runtime x precision x variant that ran (ok), per workload: samples/s, p50 latency, the CI
half-width, and the ratio to the original model in fp32 torch-eager in the same run (the naive
baseline); then the combinations recorded unsupported, grouped by their reason.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from app.contracts import Precision, Result, ResultStatus, RunReport

BASELINE = ("torch-eager", Precision.fp32, None)


def _ci_pct(r: Result) -> str:
    if r.latency_ci95_low_ms is None or r.latency_ci95_high_ms is None or not r.latency_p50_ms:
        return "-"
    return f"{(r.latency_ci95_high_ms - r.latency_ci95_low_ms) / 2 / r.latency_p50_ms * 100:.0f}%"


def table(report: RunReport) -> str:
    lines = []
    by_workload: dict[str, list[Result]] = defaultdict(list)
    for r in report.results:
        by_workload[r.workload].append(r)
    for workload, results in by_workload.items():
        ok = [r for r in results if r.status is ResultStatus.ok and r.throughput_samples_per_s]
        base = next((r for r in ok if (r.runtime, r.precision, r.variant) == BASELINE), None)
        lines += [
            f"**{workload}** (infer, batch {results[0].batch_size}, {results[0].threads} threads)",
            "",
            "| runtime | precision | variant | samples/s | p50 ms | CI | x fp32 eager |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for r in sorted(ok, key=lambda r: -(r.throughput_samples_per_s or 0)):
            assert r.throughput_samples_per_s is not None and r.latency_p50_ms is not None
            ratio = f"{r.throughput_samples_per_s / base.throughput_samples_per_s:.2f}" if base else "-"
            compile_note = f" (compile {r.compile_time_s:.0f} s)" if r.compile_time_s else ""
            lines.append(
                f"| {r.runtime}{compile_note} | {r.precision.value} | {r.variant or '-'} | "
                f"{r.throughput_samples_per_s:,.1f} | {r.latency_p50_ms:,.1f} | {_ci_pct(r)} | {ratio} |"
            )
        failed = [r for r in results if r.status is not ResultStatus.ok]
        if failed:
            lines.append("")
            lines.append(f"Not measured ({len(failed)} combinations), by reason:")
            lines.append("")
            reasons: dict[str, list[str]] = defaultdict(list)
            for r in failed:
                reasons[f"{r.status.value}: {r.reason}"].append(
                    f"{r.runtime} {r.precision.value}" + (f" {r.variant}" if r.variant else "")
                )
            for reason, configs in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
                shown = ", ".join(configs[:6]) + (f" and {len(configs) - 6} more" if len(configs) > 6 else "")
                lines.append(f"- {shown}: {reason[:300]}")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path, help="the RunReport JSON (hwadvisor bench --out)")
    args = parser.parse_args()
    print(table(RunReport.model_validate_json(args.report.read_text(encoding="utf-8"))))


if __name__ == "__main__":
    main()
