"""The written-down language-model step (app/perfmodel/llm.py) is the step the recorder counts from
the real model, operator by operator; at the zoo's context it is the shipped profile."""

from __future__ import annotations

from collections import Counter

import pytest

from app.bench import profiling
from app.bench.workloads import get_workload
from app.bench.workloads.llama import LlmWorkload
from app.contracts import LLM_PRESETS, Precision, Task
from app.perfmodel import llm
from app.perfmodel.operators import OpCount
from app.perfmodel.profile import shipped


def _multiset(ops: list[OpCount]) -> Counter[tuple[str, str, float, float, float]]:
    return Counter((o.name, o.op_class.value, round(o.flops, 3), round(o.bytes, 3), o.kernels) for o in ops)


@pytest.mark.parametrize("task", [Task.prefill, Task.decode])
@pytest.mark.parametrize("precision", [Precision.fp32, Precision.bf16])
@pytest.mark.parametrize("name", ["llama_135m", "llama3_8b"])  # tied and untied heads
def test_the_written_step_is_the_recorded_one(name: str, task: Task, precision: Precision) -> None:
    workload = get_workload(name)
    assert isinstance(workload, LlmWorkload)
    workload.use_context(7)
    recorded = profiling.count_generation(workload, task, precision, 3, "tiny")
    written = llm.step_ops(workload.shape("tiny"), task, 3, 7, precision)
    assert _multiset(written) == _multiset(recorded.ops)
    assert recorded.kv_cache == workload.shape("tiny").kv_cache_bytes(
        llm.kv_cache_length(task, 7), 3, 2 if precision is Precision.bf16 else 4
    )


@pytest.mark.parametrize("task", [Task.prefill, Task.decode])
@pytest.mark.parametrize("precision", [Precision.fp32, Precision.bf16])
@pytest.mark.parametrize("name", list(LLM_PRESETS))
def test_at_the_zoos_context_it_is_the_shipped_profile(name: str, task: Task, precision: Precision) -> None:
    """The buckets' totals and the memory match the profile recorded from the full-size model."""
    recorded = shipped()[(name, task, precision)]
    written = llm.profile(name, LLM_PRESETS[name].shape, task, precision, recorded.shape["sequence"])
    for batch in (1, 16):
        assert written.flops(batch) == pytest.approx(recorded.flops(batch), rel=2e-5)
        assert written.bytes(batch) == pytest.approx(recorded.bytes(batch), rel=2e-5)
    assert written.kernels() == recorded.kernels()
    assert written.memory.weights == pytest.approx(recorded.memory.weights, rel=2e-5)
    assert written.memory.kv_cache.at(8) == pytest.approx(recorded.memory.kv_cache.at(8), rel=2e-5)
    # the recorder follows every tensor's life; the written figure takes the two largest working sets
    assert written.memory.activations.at(8) == pytest.approx(recorded.memory.activations.at(8), rel=0.1)
