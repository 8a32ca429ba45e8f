"""benchmarks/heldout_gpu.py: a GPU machine's export set against what the shipped advisor says of its
part, on a machine no shipped run holds; its jobs apart; its summary on a small known set."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import heldout_gpu
from testkit.factories import result

EXPORT = Path(__file__).resolve().parents[2] / "benchmarks/data/gpu_truth/h200-2026-11-30-reference.jsonl"


def test_an_export_whose_gpu_a_shipped_run_holds_is_refused_with_what_to_do() -> None:
    # session 45's machine is in the H200's reference since: set against it, it would be checked in sample
    with pytest.raises(SystemExit) as stopped:
        heldout_gpu.main([str(EXPORT)])
    assert "a shipped reference run already holds this machine" in str(stopped.value)
    assert "at a commit from before it joined" in str(stopped.value)


def test_the_first_job_is_the_measurement_and_the_later_one_its_repeat() -> None:
    run = heldout_gpu.built([EXPORT])
    first, later = heldout_gpu.measured(run, heldout_gpu.jobs([EXPORT]))
    # the first job's two runs (the agent stopped at the budget, the next call's resumed it) are one grid:
    # 11 workloads x infer/train x fp32/tf32/bf16 x two batches; the second job stopped 11 configs short
    assert len(first) == 132 and len(later) < len(first)
    assert set(later) <= set(first)
    assert {k[3] for k in first} == {1, 32, 256}


def test_the_summary_is_the_mean_log_error_its_sign_and_how_often_the_band_held() -> None:
    truth = {
        ("resnet50", "infer", "bf16", 1): result(batch_size=1, throughput_samples_per_s=100.0),
        ("resnet50", "infer", "bf16", 256): result(throughput_samples_per_s=1000.0),
    }
    figures = {
        # twice the measurement with a band that misses it; half of it with a band that holds it
        "api": {("resnet50", "infer", "bf16", 1): (200.0, 150.0, 260.0)},
        "transfer": {("resnet50", "infer", "bf16", 256): (500.0, 400.0, 1200.0)},
        "model": {},
    }
    lines: list[str] = []
    heldout_gpu.report(truth, figures, out=lines.append)
    (batch_1,) = [line for line in lines if "infer batch 1 " in line]
    assert f"{math.log(2):.2f}" in batch_1 and "+100%" in batch_1 and "0%" in batch_1.split()[-1]
    (batch_256,) = [line for line in lines if "infer batch 256" in line]
    assert f"{math.log(2):.2f}" in batch_256 and "-50%" in batch_256 and batch_256.split()[-1] == "100%"
    (everything,) = [line for line in lines if line.strip().startswith("all")]
    # each way over the results it answered: one each
    assert everything.split()[1] == "1"
