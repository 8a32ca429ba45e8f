"""llama.cpp really runs the zoo's language models from the GGUF the project writes, at tiny size."""

from __future__ import annotations

import pytest

from app.bench.config import BenchConfig
from app.bench.gguf_export import gguf_path, llama_names
from app.bench.runner import run_config
from app.bench.workloads import get_workload
from app.bench.workloads.llama import LlmWorkload
from app.contracts import Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (./scripts/setup on Linux x86-64)")
gguf = pytest.importorskip("gguf", reason="gguf is not installed (./scripts/setup on Linux x86-64)")


def llama(name: str = "llama_135m") -> LlmWorkload:
    workload = get_workload(name)
    assert isinstance(workload, LlmWorkload)
    return workload


@pytest.mark.parametrize(
    ("precision", "linear"),
    [
        (Precision.fp32, "F32"),
        (Precision.fp16, "F16"),
        (Precision.bf16, "BF16"),
        (Precision.int8, "Q8_0"),
        (Precision.int4, "Q4_0"),
    ],
)
def test_the_gguf_holds_every_weight_in_the_precision_and_the_shape(precision: Precision, linear: str) -> None:
    workload = llama()
    reader = gguf.GGUFReader(str(gguf_path(workload, "tiny", precision)))
    shape = workload.shape("tiny")
    types = {t.name: t.tensor_type.name for t in reader.tensors}
    assert set(types) == {ours for ours, _ in llama_names(workload.make("tiny"), shape)}
    assert types["blk.0.ffn_down.weight"] == linear and types["blk.1.attn_q.weight"] == linear
    assert types["blk.0.attn_norm.weight"] == "F32"  # norms stay F32
    assert "output.weight" not in types  # SmolLM ties the head to the embedding
    count = reader.fields["llama.block_count"]
    assert int(count.parts[count.data[0]][0]) == shape.layers


def test_weight_only_int8_and_int4_store_the_bytes_the_serving_model_counts() -> None:
    from app.perfmodel.llm import WEIGHT_BYTES

    for precision in (Precision.int8, Precision.int4):
        reader = gguf.GGUFReader(str(gguf_path(llama(), "tiny", precision)))
        down = next(t for t in reader.tensors if t.name == "blk.0.ffn_down.weight")
        assert down.n_bytes == down.n_elements * WEIGHT_BYTES[precision]


@pytest.mark.parametrize("precision", [Precision.fp32, Precision.bf16, Precision.int8, Precision.int4])
@pytest.mark.parametrize("task", [Task.prefill, Task.decode])
def test_prefill_and_decode_are_measured_with_their_tokens(task: Task, precision: Precision) -> None:
    config = BenchConfig("llama_135m", task, "llama-cpp", "cpu", precision, 1, 1, context=16)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.context_tokens == 16 and result.iterations == 2
    tokens = 16 if task is Task.prefill else 1
    assert result.throughput_tokens_per_s == pytest.approx(tokens / (result.latency_p50_ms / 1000))  # type: ignore[operator]
    assert result.kv_cache_mb is not None and result.kv_cache_mb > 0


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (BenchConfig("llama_135m", Task.decode, "llama-cpp", "cpu", Precision.fp32, 4, 1, context=16), "batch 1"),
        (
            BenchConfig("resnet50", Task.infer, "llama-cpp", "cpu", Precision.fp32, 1, 1),
            "prefill and decode, not infer",
        ),
        (BenchConfig("llama_135m", Task.train, "llama-cpp", "cpu", Precision.fp32, 1, 1, context=16), "not train"),
        (BenchConfig("llama_135m", Task.decode, "torch-eager", "cpu", Precision.int8, 1, 1), "runtime llama-cpp"),
        (BenchConfig("llama_135m", Task.decode, "torch-eager", "cpu", Precision.int4, 1, 1), "Q4_0 here"),
        (BenchConfig("resnet50", Task.infer, "llama-cpp", "cpu", Precision.int4, 1, 1), "int8, not int4"),
    ],
    ids=lambda c: c.label() if isinstance(c, BenchConfig) else c,
)
def test_what_it_cannot_run_says_why(config: BenchConfig, words: str) -> None:
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.unsupported and words in (result.reason or ""), result.reason
