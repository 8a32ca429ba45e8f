"""The runner keeps going past failures, keeps what finished on Ctrl-C, and the CLI makes a valid RunReport."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.bench.config import BenchConfig
from app.bench.onnx_export import model_path
from app.bench.runner import run_config, run_suite
from app.bench.suites import Suite, load_suite, thread_counts
from app.bench.workloads import get_workload
from app.contracts import MeasureSpec, Precision, ResultStatus, RunReport, Task
from app.errors import ConfigError
from tests.bench.test_runtimes import TINY, machine

ROOT = Path(__file__).resolve().parents[2]


def test_an_impossible_batch_is_recorded_as_oom() -> None:
    config = BenchConfig("fcn_s", Task.infer, "torch-eager", "cpu", Precision.fp32, 1_000_000, 2)  # 107 GB of input
    result = run_config(config, machine(), TINY)
    assert result.status is ResultStatus.oom, result.reason
    assert "allocate" in (result.reason or "")


def test_an_exception_in_one_config_is_recorded_as_error(tmp_path: Path) -> None:
    path = model_path(get_workload("resnet56"), "tiny")
    good = path.read_bytes()
    try:
        path.write_bytes(b"not an onnx file")
        config = BenchConfig("resnet56", Task.infer, "onnxruntime-cpu", "cpu", Precision.fp32, 1, 1)
        result = run_config(config, machine(), TINY, size="tiny")
    finally:
        path.write_bytes(good)
    assert result.status is ResultStatus.error
    assert result.reason


def suite(**grid: object) -> Suite:
    return Suite.model_validate({"name": "t", "grid": [grid]})


def test_suite_goes_on_after_failures_and_keeps_order() -> None:
    tiny = suite(workloads=["resnet56", "no_such_model"], precisions=["fp32", "tf32"])
    run = run_suite(tiny, machine(), fixed_iterations=1, size="tiny")
    statuses = [(r.workload, r.task, r.precision.value, r.status.value) for r in run.results]
    assert statuses == [
        ("resnet56", "infer", "fp32", "ok"),
        ("resnet56", "infer", "tf32", "unsupported"),
        ("no_such_model", "infer", "fp32", "unsupported"),
        ("no_such_model", "infer", "tf32", "unsupported"),
    ]
    assert "known:" in (run.results[2].reason or "")


def test_ctrl_c_keeps_what_finished() -> None:
    calls = []

    def progress(index: int, total: int, config: BenchConfig, eta: float | None) -> None:
        calls.append(index)
        if index == 2:
            raise KeyboardInterrupt

    run = run_suite(suite(workloads=["gemm_1024"], threads=[1, 2]), machine(), fixed_iterations=2, progress=progress)
    assert run.interrupted and len(run.results) == 1 and calls == [1, 2]


def test_thread_scaling_goes_up_to_the_cores_and_past_them_only_with_smt() -> None:
    from testkit.factories import h100_spec

    spec = h100_spec()  # 16 physical, 16 logical
    assert thread_counts("scaling", spec) == [1, 2, 4, 8, 16]
    smt = spec.model_copy(update={"cpu": spec.cpu.model_copy(update={"logical_cores": 32, "effective_cpus": 32.0})})
    assert thread_counts("scaling", smt) == [1, 2, 4, 8, 16, 32]
    limited = spec.model_copy(update={"cpu": spec.cpu.model_copy(update={"effective_cpus": 1.5})})
    assert thread_counts("scaling", limited) == [1] and thread_counts("all", limited) == [1]


@pytest.mark.parametrize("name", ["quick", "standard", "full"])
def test_built_in_suites_load_and_expand(name: str) -> None:
    configs = load_suite(name).configs(machine())
    assert configs and all(
        c.device == "cpu" for c in configs if not any(d.kind.value == "cuda" for d in machine().devices)
    )


def test_bad_suite_file_says_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\n[[grid]]\nworkloads = ["resnet50"]\nprecision = ["fp32"]\n')
    with pytest.raises(ConfigError, match="precision"):
        load_suite(str(path))
    with pytest.raises(ConfigError, match="quick, standard, full"):
        load_suite("nonexistent")


def test_bench_command_writes_a_valid_run_report(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "bench",
            "--suite",
            "quick",
            "--only",
            "lstm",
            "--iterations",
            "3",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "[1/2]" in done.stderr and "lstm/infer" in done.stdout
    report = RunReport.model_validate(json.loads(out.read_text()))
    assert [r.runtime for r in report.results] == ["torch-eager", "onnxruntime-cpu"]
    assert all(r.iterations == 3 for r in report.results)


def test_quick_suite_measure_settings_come_from_the_file() -> None:
    quick = load_suite("quick")
    assert quick.measure.target_ci == 0.02 and MeasureSpec().target_ci == 0.02
