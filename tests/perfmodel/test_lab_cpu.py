"""benchmarks/lab_cpu.py: which catalog parts a lab CPU can be, and its eager / graph pairs."""

from __future__ import annotations

import re

from app.catalog import load
from app.contracts import ResultStatus
from app.perfmodel.runtime_pairs import Machine
from benchmarks.lab_cpu import candidates, pairs_entry
from testkit.factories import result, run_report


def test_a_cpuid_names_its_generation_and_the_catalog_parts_of_it() -> None:
    generation, parts = candidates("AuthenticAMD", 23, 1, load())
    assert generation == "Zen" and parts
    assert all(p.architecture == "Zen" and re.fullmatch(r"AMD EPYC 7\d\d1P?", p.name) for p in parts)
    assert candidates("AuthenticAMD", 23, 0x31, load())[0] == "Zen 2"
    assert candidates("AuthenticAMD", 99, 1, load()) == ("unknown", [])


def test_only_configs_measured_under_both_runtimes_make_a_pair() -> None:
    cpu = {"device": "cpu", "precision": "fp32", "threads": 2, "batch_size": 1}
    report = run_report(
        results=[
            result(workload="resnet50", runtime="torch-eager", throughput_samples_per_s=6.0, **cpu),
            result(workload="resnet50", runtime="onnxruntime-cpu", throughput_samples_per_s=9.0, **cpu),
            result(workload="lstm", runtime="torch-eager", throughput_samples_per_s=250.0, **cpu),  # eager alone
            result(
                workload="bert_base",
                runtime="onnxruntime-cpu",
                status=ResultStatus.unsupported,
                reason="not in this build",
                throughput_samples_per_s=None,
                **cpu,
            ),
        ]
    )
    _, parts = candidates("AuthenticAMD", 23, 1, load())
    entry = Machine.model_validate(pairs_entry("vm-test", "AMD EPYC", parts, report))
    assert entry.architectures == ["Zen"] and entry.parts(load()) == parts
    (pair,) = entry.pairs
    assert (pair.workload, pair.graph_runtime, pair.ratio) == ("resnet50", "onnxruntime-cpu", 6.0 / 9.0)


def test_a_machine_faster_than_its_cpuids_generation_is_said_to_be() -> None:
    from benchmarks.lab_cpu import outrun

    _, parts = candidates("AuthenticAMD", 23, 1, load())  # Zen: at most 122 GFLOP/s on 2 cores
    cpu = {"device": "cpu", "precision": "fp32", "threads": 2, "batch_size": 8, "runtime": "onnxruntime-cpu"}
    plausible = result(workload="resnet50", throughput_samples_per_s=10.0, **cpu)  # 82 GFLOP/s
    impossible = result(workload="resnet50", throughput_samples_per_s=40.0, **cpu)  # 330 GFLOP/s
    assert outrun([plausible], parts, 2) is None
    note = outrun([plausible, impossible], parts, 2)
    assert note is not None and "generic model" in note


def test_without_holds_a_pairs_machine_out_of_the_level_it_predicts_this_machine_by() -> None:
    import pytest

    from benchmarks.lab_cpu import held_out, this_machine

    cpu = {"device": "cpu", "precision": "fp32", "threads": 2, "batch_size": 1}
    report = run_report(
        results=[
            result(workload="resnet50", runtime="torch-eager", throughput_samples_per_s=6.3, **cpu),
            result(workload="resnet50", runtime="onnxruntime-cpu", throughput_samples_per_s=9.4, **cpu),
        ]
    )
    _, parts = candidates("AuthenticAMD", 23, 1, load())
    lines: list[str] = []
    held_out(this_machine("this machine", "AMD EPYC", parts, report), "vm-zen1", lines.append)
    figures = [line for line in lines if "measured" in line]
    assert len(figures) == 2 and figures[0].startswith("resnet50/infer fp32 torch-eager batch 1 threads 2")
    assert lines[-1].startswith("2 figures: mean abs log error")
    with pytest.raises(SystemExit, match="no machine 'vm-nowhere'"):
        held_out(this_machine("this machine", "AMD EPYC", parts, report), "vm-nowhere", lines.append)


def test_each_figure_is_judged_by_the_band_its_answer_carries() -> None:
    """A language model's step carries the generation model's own band (its calibration's, not the
    uncalibrated model's x/÷4, which no answer carries); eager PyTorch's figure the lab level's."""
    from app.contracts import Task
    from app.perfmodel import lab_levels
    from app.perfmodel.generation import shipped as llm_calibration
    from app.perfmodel.predict import band_of
    from benchmarks.lab_cpu import band

    _, parts = candidates("AuthenticAMD", 25, 1, load())
    cpu = {"device": "cpu", "precision": "fp32", "threads": 2, "batch_size": 1, "runtime": "torch-eager"}
    prefill = result(workload="llama_135m", task="prefill", context_tokens=64, **cpu)
    decode = result(workload="llama_135m", task="decode", context_tokens=128, **cpu)
    eager = result(workload="resnet50", **cpu)
    assert band(prefill, parts, 2) == llm_calibration().band("cpu", Task.prefill)[0]
    assert band(decode, parts, 2) == llm_calibration().band("cpu", Task.decode)[0]
    assert band(eager, parts, 2) == band_of(lab_levels.BAND, "cpu-uncalibrated")
    assert band(prefill, parts, 2) < band_of("cpu-uncalibrated")


def test_a_saved_run_is_compared_against_the_cpu_it_was_measured_on() -> None:
    """``--report`` reads a kept run (benchmarks/data/lab_cpu) against its own CPU's generation, whatever
    machine reads it: a Zen 3 VM's run names Zen 3 and its parts, an AMX Xeon's the Xeons with AMX."""
    from pathlib import Path

    from benchmarks.lab_cpu import main

    kept = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "lab_cpu"
    for run, generation, part in (
        ("zen3-2026-11-30-run1.json", "(Zen 3)", "epyc-7763"),
        ("emr-amx-2026-12-01-run1.json", "(Emerald Rapids)", "xeon-platinum-8580"),
    ):
        lines: list[str] = []
        main(["--report", str(kept / run)], lines.append)
        assert lines[0].startswith("# The report's CPU:") and lines[0].endswith(f"{generation}, 2 vCPUs"), lines[0]
        assert part in lines[1]
        assert any(line.startswith("median part: mean abs log error") for line in lines)
