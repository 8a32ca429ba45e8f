"""The bench table tells only what the statistics support: no CI from too few samples, and each
footnote only under a row that has its mark."""

from __future__ import annotations

from app.bench.config import BenchConfig
from app.bench.report import NOTES, render_results
from app.bench.runner import run_config
from app.contracts import MeasureSpec, Precision, Result, ResultStatus
from testkit.factories import result
from tests.bench.test_runtimes import machine

UNSTABLE_NOTE, TOO_FEW_NOTE = NOTES[" !"], NOTES["n/a"]


def _measured(iterations: int) -> Result:
    """A real measurement of a small GEMM, exactly this many timed iterations."""
    config = BenchConfig("gemm_1024", None, "torch-eager", "cpu", Precision.fp32, 1, 1)
    settings = MeasureSpec(fixed_iterations=iterations, warmup_min=1, warmup_budget_s=0.0)
    measured = run_config(config, machine(), settings)
    assert measured.status is ResultStatus.ok and measured.iterations == iterations, measured.reason
    return measured


def _ci_cell(table: str, workload: str) -> str:
    header, *rows = table.splitlines()
    start = header.index("±CI")
    row = next(r for r in rows if r.startswith(workload))
    return row[start : header.index(" n ", start)].strip()


def test_one_or_two_iterations_show_no_ci_and_say_why() -> None:
    for iterations in (1, 2):
        table = render_results([_measured(iterations)])
        assert _ci_cell(table, "gemm_1024") == "n/a", table
        assert "0.0%" not in table
        assert TOO_FEW_NOTE in table and "fewer than 6 iterations" in table
        assert UNSTABLE_NOTE not in table


def test_the_unstable_footnote_prints_only_when_a_row_is_marked() -> None:
    steady = result(stable=True)
    table = render_results([steady, result(status="oom", reason="out of memory")])
    assert "!" not in table
    assert UNSTABLE_NOTE not in table and TOO_FEW_NOTE not in table

    table = render_results([steady, result(workload="bert_base", stable=False)])
    row = next(r for r in table.splitlines() if r.startswith("bert_base"))
    assert _ci_cell(table, "bert_base").endswith("!"), row
    assert table.count(UNSTABLE_NOTE) == 1 and TOO_FEW_NOTE not in table


def test_enough_iterations_show_the_ci_half_width() -> None:
    table = render_results([result(iterations=120, latency_ci95_low_ms=28.0, latency_ci95_high_ms=28.4)])
    assert _ci_cell(table, "resnet50") == "0.7%"  # (28.4 - 28.0) / 2 / 28.2
