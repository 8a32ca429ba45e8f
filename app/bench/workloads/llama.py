"""The Llama-style decoder family: presets of published shapes (app/contracts/llm.py), random weights.

A language model has three tasks here, not ``infer``:

- ``prefill``: a prompt of P tokens per sequence read into the KV cache, the first token out (TTFT);
- ``decode``: one new token per sequence from a KV cache holding L tokens (time per output token);
- ``train``: next-token cross-entropy over sequences of the context length, every position's logits.

The config's context (``BenchConfig.context``) is P, L or the training sequence; unset, the preset's
``CONTEXT`` (512; 16 at the tests' tiny size, where every preset is the same 2-layer miniature of its
family). Prefill and decode run the model in the config's dtype (bf16/fp16 weights, as serving stores
them); training keeps FP32 weights under autocast, the zoo's recipe. ``generation`` builds the timed
step; the runtime only wraps the model (eager or compiled) and the harness times the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from app.bench.workloads.base import SEED, Size, Workload, WorkloadInfo, workloads
from app.contracts import LLM_PRESETS, LlmPreset, LlmShape, Precision, Task
from app.contracts.llm import STANDARD_CONTEXT

if TYPE_CHECKING:
    from collections.abc import Callable

    import torch
    from torch import nn

LLM_TASKS = (Task.prefill.value, Task.decode.value, Task.train.value)
LLM_PRECISIONS = (
    Precision.fp32.value,
    Precision.bf16.value,
    Precision.fp16.value,
    Precision.int8.value,
    Precision.int4.value,
)
"""int8 and int4 are weight-only (llama.cpp's Q8_0 and Q4_0, runtime llama-cpp): measured, and
modelled for serving from the written-down step (app/perfmodel/llm.py), not from a zoo profile."""
MODELLED_PRECISIONS = (Precision.fp32.value, Precision.bf16.value, Precision.fp16.value)
CONTEXT, TINY_CONTEXT = STANDARD_CONTEXT, 16
TINY_SHAPE = LlmShape(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=128, vocabulary=256)
"""What every preset is at the tests' tiny size: the family's structure, a few thousand weights."""


@dataclass
class Generation:
    """A prefill or decode step ready to time, and what it holds."""

    step: Callable[[], object]
    tokens_per_step: int
    """Tokens the step processes: batch x prompt (prefill), batch (decode: one per sequence)."""
    context: int
    kv_cache_bytes: int
    weights_bytes: int
    module: nn.Module
    """What ``step`` calls, with ``inputs``: the profiler records it on fake tensors."""
    inputs: tuple[torch.Tensor, ...]
    cache: tuple[torch.Tensor, ...]
    """The KV cache's tensors (every layer's keys and values), which the step writes into."""


def tokens_per_step(task: Task, batch: int, context: int) -> int:
    """Prefill and training process every token of the context; decode one token per sequence."""
    return batch if task is Task.decode else batch * context


class LlmWorkload(Workload):
    """A preset of the family; subclasses set ``info`` and ``preset``."""

    preset: ClassVar[LlmPreset]
    context: int | None = None
    """The config's context, when it gives one (``use_context``); else CONTEXT / TINY_CONTEXT."""

    def shape(self, size: Size = "standard") -> LlmShape:
        return (
            TINY_SHAPE.model_copy(update={"tied_embeddings": self.preset.shape.tied_embeddings})
            if (size == "tiny")
            else self.preset.shape
        )

    def use_context(self, context: int | None) -> None:
        self.context = context

    def context_length(self, size: Size = "standard") -> int:
        if self.context is not None:
            return self.context
        return TINY_CONTEXT if size == "tiny" else CONTEXT

    def build(self) -> nn.Module:
        from app.bench.models.llama import LlamaModel

        return LlamaModel(self.preset.shape)

    def build_tiny(self) -> nn.Module:
        from app.bench.models.llama import LlamaModel

        return LlamaModel(self.shape("tiny"))

    def sample_shape(self, size: Size = "standard") -> dict[str, int]:
        return {"sequence": self.context_length(size)}

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        import torch

        return (torch.randint(0, self.shape(size).vocabulary, (batch, self.context_length(size))),)

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        """The next token at every position (random ids: speed does not depend on them)."""
        import torch

        return torch.randint(0, self.shape(size).vocabulary, (batch, self.context_length(size)))

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        from torch import nn

        return nn.functional.cross_entropy(output.flatten(0, 1).float(), target.flatten())

    def generation(
        self,
        task: Task,
        batch: int,
        *,
        size: Size,
        dtype: torch.dtype,
        device: torch.device,
        wrap: Callable[[nn.Module], nn.Module],
    ) -> Generation:
        """The timed step of prefill (the prompt from position 0, then the first token) or decode (one
        token per sequence at position L, the cache holding L tokens; every timed step generates at
        the same position, so each is one output token at context L). The token is the greedy
        argmax of the last position's logits; token ids are random, so no tokeniser runs."""
        import torch

        from app.bench.models.llama import KvCache, LlamaModel, NextToken

        if task not in (Task.prefill, Task.decode):
            raise ValueError(f"generation runs prefill or decode, not {task.value}")
        context = self.context_length(size)
        shape = self.shape(size)
        torch.manual_seed(SEED)
        with device:
            model = LlamaModel(shape, dtype=dtype).eval()
        length = context if task is Task.prefill else context + 1
        cache = KvCache.allocate(shape, batch, length, dtype=dtype, device=device)
        if task is Task.decode:
            for tensor in (*cache.keys, *cache.values):
                tensor.normal_()
        prompt = context if task is Task.prefill else 1
        ids = torch.randint(0, shape.vocabulary, (batch, prompt), device=device)
        generator = wrap(NextToken(model, cache, start=0 if task is Task.prefill else context))

        def step() -> object:
            with torch.inference_mode():
                return generator(ids)

        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        return Generation(
            step,
            tokens_per_step(task, batch, context),
            context,
            cache.nbytes,
            weights,
            generator,
            (ids,),
            (*cache.keys, *cache.values),
        )


def _info(preset: str, description: str) -> WorkloadInfo:
    """``flops_per_sample``: the forward over CONTEXT tokens as torch's FLOP counter sees it (the GEMMs,
    2 x the weights a token multiplies through, per token; not the CPU's fused attention kernel)."""
    shape = LLM_PRESETS[preset].shape
    return WorkloadInfo(
        name=preset,
        description=description,
        tasks=LLM_TASKS,
        precisions=LLM_PRECISIONS,
        parameters=LLM_PRESETS[preset].published_parameters,
        flops_per_sample=2 * shape.matmul_parameters * CONTEXT,
        default_batch_sizes=(1, 8, 32),
        input_names=("input_ids",),
    )


@workloads.register
class Llama135m(LlmWorkload):
    preset = LLM_PRESETS["llama_135m"]
    info = _info("llama_135m", "Llama-style 135M (SmolLM-135M shape), context 512")


@workloads.register
class Llama360m(LlmWorkload):
    preset = LLM_PRESETS["llama_360m"]
    info = _info("llama_360m", "Llama-style 360M (SmolLM-360M shape), context 512")


@workloads.register
class Llama3_1b(LlmWorkload):
    preset = LLM_PRESETS["llama3_1b"]
    info = _info("llama3_1b", "Llama 3.2 1B shape, context 512")


@workloads.register
class Llama3_3b(LlmWorkload):
    preset = LLM_PRESETS["llama3_3b"]
    info = _info("llama3_3b", "Llama 3.2 3B shape, context 512")


@workloads.register
class Llama3_8b(LlmWorkload):
    preset = LLM_PRESETS["llama3_8b"]
    info = _info("llama3_8b", "Llama 3.1 8B shape, context 512")


@workloads.register
class Llama3_70b(LlmWorkload):
    preset = LLM_PRESETS["llama3_70b"]
    info = _info("llama3_70b", "Llama 3.1 70B shape, context 512")
