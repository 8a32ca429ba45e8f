"""What no machine can run in a suite, said when the job is queued (app/bench/unrunnable.py), is what an agent
records unsupported when it runs it: the same configs, the same words."""

from __future__ import annotations

from app.bench.config import BenchConfig
from app.bench.runner import unsupported_reason
from app.bench.suites import load_suite, parse_suite
from app.bench.unrunnable import NOTES_MAX, job_notes, suite_notes
from app.contracts import Precision, Task
from tests.bench.support import machine

MISTAKES = """name = "mistakes"
[[grid]]
workloads = ["resnet50", "resnet5", "gemm_1024", "llama_135m"]
tasks = ["infer", "train"]
runtimes = ["torch-eager", "openvino", "onnxruntim"]
devices = ["cpu", "cuda"]
precisions = ["fp32"]
variants = ["none", "pruned-99"]
"""


def test_a_suites_mistakes_are_named_with_the_words_the_agent_records() -> None:
    notes = suite_notes(parse_suite(MISTAKES))
    said = " | ".join(notes)
    recorded = [
        unsupported_reason(BenchConfig(w, t, r, "cpu", Precision.fp32, 1, 1, variant=v), machine())
        for w, t, r, v in [
            ("resnet5", Task.infer, "torch-eager", None),  # a typo of a workload
            ("resnet50", Task.infer, "onnxruntim", None),  # of a runtime
            ("resnet50", Task.infer, "torch-eager", "pruned-99"),  # a variant nobody wrote
            ("llama_135m", Task.infer, "torch-eager", None),  # a language model has no infer
        ]
    ]
    assert all(reason is not None and reason in said for reason in recorded), (recorded, notes)
    # a runtime words its own tasks and devices: the agent records these unsupported in its words
    assert "openvino runs infer, not train" in said and "openvino runs on cpu devices only, not cuda" in said
    openvino_train = BenchConfig("resnet50", Task.train, "openvino", "cpu", Precision.fp32, 1, 1)
    assert unsupported_reason(openvino_train, machine()) is not None
    assert len(notes) == len(recorded) + 2  # each reason once, whatever it stops
    assert not any("gemm_1024" in note.split("known:")[0] for note in notes)  # a primitive takes no task or runtime


def test_a_clean_suite_and_the_built_in_ones_have_nothing_to_say() -> None:
    assert suite_notes(parse_suite('name = "tiny"\n[[grid]]\nworkloads = ["gemm_1024"]\n')) == []
    assert suite_notes(load_suite("quick")) == []
    # the full suite crosses every runtime with every task on purpose: a job of it is not told so
    assert suite_notes(load_suite("full")) and job_notes(None) == []


def test_a_grid_of_many_mistakes_says_the_first_ones_and_how_many_more() -> None:
    typos = ", ".join(f'"model_{i}"' for i in range(NOTES_MAX + 5))
    notes = suite_notes(parse_suite(f'name = "many"\n[[grid]]\nworkloads = [{typos}]\n'))
    assert len(notes) == NOTES_MAX + 1 and notes[-1].startswith("... and 5 more reasons")
