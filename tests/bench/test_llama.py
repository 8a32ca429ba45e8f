"""The Llama-style family: its cache gives the same tokens as the full forward, its arithmetic is the
model's, and prefill and decode run through the real runner with their token figures."""

from __future__ import annotations

import pytest
import torch

from app.bench.config import BenchConfig
from app.bench.models.llama import KvCache, LlamaModel
from app.bench.runner import run_config
from app.bench.workloads import count_parameters, get_workload
from app.bench.workloads.llama import TINY_SHAPE, LlmWorkload
from app.contracts import LLM_PRESETS, LlmShape, Precision, ResultStatus, Task
from tests.bench.support import TINY, machine

SHAPE = LlmShape(layers=2, hidden=48, heads=6, kv_heads=2, intermediate=96, vocabulary=101)


def test_decoding_from_the_cache_gives_the_full_forwards_logits() -> None:
    """Prefill 7 tokens, then decode the 8th from the cache: the same logits as the whole sequence at
    once. Rotary positions, grouped-query attention and the cache's offsets all have to be right."""
    torch.manual_seed(0)
    model = LlamaModel(SHAPE).eval()
    ids = torch.randint(0, SHAPE.vocabulary, (3, 8))
    cache = KvCache.allocate(SHAPE, 3, 8, dtype=torch.float32)
    with torch.no_grad():
        whole = model(ids)
        prefilled = model(ids[:, :7], cache=cache, start=0)
        decoded = model(ids[:, 7:], cache=cache, start=7)
    torch.testing.assert_close(prefilled, whole[:, 6], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(decoded, whole[:, 7], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [SHAPE, TINY_SHAPE, TINY_SHAPE.model_copy(update={"tied_embeddings": True})])
def test_the_shapes_arithmetic_is_the_models(shape: LlmShape) -> None:
    model = LlamaModel(shape)
    assert count_parameters(model) == shape.parameters
    cache = KvCache.allocate(shape, 3, 10, dtype=torch.bfloat16)
    assert cache.nbytes == shape.kv_cache_bytes(10, 3, 2) == 3 * 10 * shape.kv_bytes_per_token(2)


def test_published_kv_cache_per_token() -> None:
    """Llama 3.1 8B keeps 128 KiB per token in bf16 (32 layers x 2 x 8 kv-heads x 128 x 2 bytes); 70B 320 KiB."""
    assert LLM_PRESETS["llama3_8b"].shape.kv_bytes_per_token(2) == 128 * 1024
    assert LLM_PRESETS["llama3_70b"].shape.kv_bytes_per_token(2) == 320 * 1024


def test_a_shape_whose_heads_do_not_divide_is_refused() -> None:
    with pytest.raises(ValueError, match="kv_heads"):
        LlmShape(layers=1, hidden=64, heads=4, kv_heads=3, intermediate=8, vocabulary=10)
    with pytest.raises(ValueError, match="head_dim"):
        LlmShape(layers=1, hidden=66, heads=4, kv_heads=2, intermediate=8, vocabulary=10)


@pytest.mark.parametrize("task", [Task.prefill, Task.decode, Task.train])
def test_a_language_model_task_runs_with_its_token_figures(task: Task) -> None:
    config = BenchConfig("llama_135m", task, "torch-eager", "cpu", Precision.fp32, 2, 2, context=12)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.context_tokens == 12 and result.latency_p50_ms and result.throughput_tokens_per_s
    tokens = 2 if task is Task.decode else 2 * 12
    assert result.throughput_tokens_per_s == pytest.approx(tokens / (result.latency_p50_ms / 1000))
    assert result.throughput_samples_per_s == pytest.approx(2 / (result.latency_p50_ms / 1000))
    if task is Task.train:
        assert result.kv_cache_mb is None
    else:  # prefill holds the prompt's cache; decode the context's and the token it writes
        length = 12 if task is Task.prefill else 13
        expected = TINY_SHAPE.kv_cache_bytes(length, 2, 4) / 2**20
        assert result.kv_cache_mb == pytest.approx(expected)
    assert result.peak_memory_mb and result.peak_memory_mb > (result.kv_cache_mb or 0)


def test_what_a_language_model_does_not_have_is_unsupported_with_why() -> None:
    spec = machine()
    infer = run_config(BenchConfig("llama_135m", Task.infer, "torch-eager", "cpu", Precision.fp32, 1), spec, TINY)
    assert infer.status is ResultStatus.unsupported and "prefill, decode, train" in (infer.reason or "")
    tf32 = run_config(BenchConfig("llama_135m", Task.decode, "torch-eager", "cpu", Precision.tf32, 1), spec, TINY)
    assert tf32.status is ResultStatus.unsupported and "fp32, bf16, fp16, int8, int4, not tf32" in (tf32.reason or "")
    int8 = run_config(BenchConfig("llama_135m", Task.decode, "torch-eager", "cpu", Precision.int8, 1), spec, TINY)
    assert int8.status is ResultStatus.unsupported and "runtime llama-cpp" in (int8.reason or "")
    onnx = run_config(BenchConfig("llama_135m", Task.decode, "onnxruntime-cpu", "cpu", Precision.fp32, 1), spec, TINY)
    assert onnx.status is ResultStatus.unsupported
    resnet = run_config(BenchConfig("resnet56", Task.decode, "torch-eager", "cpu", Precision.fp32, 1), spec, TINY)
    assert resnet.status is ResultStatus.unsupported and "not decode" in (resnet.reason or "")


def test_every_preset_is_a_workload_of_its_published_shape() -> None:
    for name, preset in LLM_PRESETS.items():
        workload = get_workload(name)
        assert isinstance(workload, LlmWorkload) and workload.preset.shape == preset.shape
        assert workload.info.tasks == ("prefill", "decode", "train")


@pytest.mark.slow
def test_torch_compile_decodes_over_the_cache_without_recompiling() -> None:
    """The cache is a module attribute written in place: one graph, compiled once (timed apart)."""
    config = BenchConfig("llama_135m", Task.decode, "torch-compile", "cpu", Precision.fp32, 2, 2, context=12)
    result = run_config(config, machine(), TINY, size="tiny")
    assert result.status is ResultStatus.ok, result.reason
    assert result.compile_time_s is not None and result.compile_time_s > 0
    assert result.latency_p50_ms is not None and result.latency_p50_ms * 1000 < result.compile_time_s * 1e6


def test_a_suite_grid_gives_language_models_their_contexts_and_others_none() -> None:
    from app.bench.suites import parse_suite

    suite = parse_suite(
        'name = "t"\n[[grid]]\nworkloads = ["llama_135m", "resnet56"]\ntasks = ["decode"]\ncontexts = [64, 256]\n',
        "test",
    )
    configs = suite.configs(machine())
    assert sorted((c.workload, c.context) for c in configs) == [
        ("llama_135m", 64),
        ("llama_135m", 256),
        ("resnet56", None),
    ]
