"""A decoder-only language model's shape (Llama-style) and the presets of published configurations.

The shape is all the performance model, the memory rules and the serving planner need: the number of
weights, the KV cache per token, and the FLOPs of a token, are arithmetic on it. It is a wire model
because a serving question may give a custom one (layers, hidden size, heads, kv-heads, vocabulary).

Presets (``LLM_PRESETS``) are the published configurations' shapes; their parameter counts are the
published ones and are checked against the project's own model (tests/bench/test_workloads.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from pydantic import Field, model_validator

from app.contracts.common import Name, Strict

STANDARD_CONTEXT = 512
"""The context a language model's workload is measured and profiled at unless a config gives another:
its prompt (prefill), its KV cache (decode) and its training sequence."""


class LlmShape(Strict):
    """A Llama-style decoder: RMSNorm, rotary positions, grouped-query attention, a SwiGLU MLP and a
    vocabulary head (tied to the embedding or not)."""

    layers: int = Field(ge=1, le=1024)
    hidden: int = Field(ge=8, le=131_072, description="Model width.")
    heads: int = Field(ge=1, le=1024, description="Query heads.")
    kv_heads: int = Field(ge=1, le=1024, description="Key/value heads (grouped-query attention); = heads: MHA.")
    intermediate: int = Field(ge=1, le=1_048_576, description="The SwiGLU MLP's inner width.")
    vocabulary: int = Field(ge=2, le=4_194_304)
    tied_embeddings: bool = Field(default=False, description="The head reuses the embedding's weights.")
    head_dim: int | None = Field(default=None, ge=1, le=4096, description="Unset: hidden / heads.")

    @model_validator(mode="after")
    def _heads_divide(self) -> Self:
        if self.head_dim is None and self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not a multiple of heads {self.heads}; give head_dim")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        return self

    @property
    def dim(self) -> int:
        """Width of one attention head."""
        return self.head_dim or self.hidden // self.heads

    @property
    def embedding_parameters(self) -> int:
        """The token embedding and, untied, the head: both vocabulary x hidden."""
        return self.vocabulary * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def layer_parameters(self) -> int:
        """One layer: q, k, v, o projections, gate/up/down of the MLP, two RMSNorm weights."""
        q_width, kv_width = self.heads * self.dim, self.kv_heads * self.dim
        attention = self.hidden * q_width + 2 * self.hidden * kv_width + q_width * self.hidden
        return attention + 3 * self.hidden * self.intermediate + 2 * self.hidden

    @property
    def parameters(self) -> int:
        return self.embedding_parameters + self.layers * self.layer_parameters + self.hidden

    @property
    def matmul_parameters(self) -> int:
        """Weights a token multiplies through: every layer's projections and the head (the embedding is a gather)."""
        return self.layers * (self.layer_parameters - 2 * self.hidden) + self.vocabulary * self.hidden

    def kv_bytes_per_token(self, bytes_per_value: float) -> float:
        """The KV cache of one token of one sequence: layers x 2 (key, value) x kv-heads x head width x bytes."""
        return self.layers * 2 * self.kv_heads * self.dim * bytes_per_value

    def kv_cache_bytes(self, tokens: int, batch: int, bytes_per_value: float) -> float:
        """layers x 2 x kv-heads x head-dim x context x batch x bytes."""
        return self.kv_bytes_per_token(bytes_per_value) * tokens * batch

    def attention_flops(self, queries: int, keys: int) -> float:
        """FLOPs of attention scores and the weighted sum for ``queries`` tokens over ``keys`` (all layers):
        2 x 2 x queries x keys x heads x head-dim per layer (causal prefill: pass the mean key count)."""
        return 4.0 * queries * keys * self.heads * self.dim * self.layers


@dataclass(frozen=True, slots=True)
class LlmPreset:
    name: Name
    shape: LlmShape
    published_parameters: int
    source: str


def _preset(name: str, source: str, published: int, **shape: int | bool) -> LlmPreset:
    return LlmPreset(name=name, shape=LlmShape.model_validate(shape), published_parameters=published, source=source)


LLM_PRESETS: dict[str, LlmPreset] = {
    p.name: p
    for p in (
        # SmolLM-135M: the published Llama-architecture configuration nearest 125M parameters
        _preset(
            "llama_135m",
            "HuggingFaceTB/SmolLM-135M config.json (Llama architecture, tied embeddings)",
            134_515_008,
            layers=30,
            hidden=576,
            heads=9,
            kv_heads=3,
            intermediate=1536,
            vocabulary=49152,
            tied_embeddings=True,
        ),
        _preset(
            "llama_360m",
            "HuggingFaceTB/SmolLM-360M config.json (Llama architecture, tied embeddings)",
            361_821_120,
            layers=32,
            hidden=960,
            heads=15,
            kv_heads=5,
            intermediate=2560,
            vocabulary=49152,
            tied_embeddings=True,
        ),
        _preset(
            "llama3_1b",
            "meta-llama/Llama-3.2-1B config.json",
            1_235_814_400,
            layers=16,
            hidden=2048,
            heads=32,
            kv_heads=8,
            intermediate=8192,
            vocabulary=128256,
            tied_embeddings=True,
            head_dim=64,
        ),
        _preset(
            "llama3_3b",
            "meta-llama/Llama-3.2-3B config.json",
            3_212_749_824,
            layers=28,
            hidden=3072,
            heads=24,
            kv_heads=8,
            intermediate=8192,
            vocabulary=128256,
            tied_embeddings=True,
            head_dim=128,
        ),
        _preset(
            "llama3_8b",
            "meta-llama/Llama-3.1-8B config.json",
            8_030_261_248,
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            intermediate=14336,
            vocabulary=128256,
        ),
        _preset(
            "llama3_70b",
            "meta-llama/Llama-3.1-70B config.json",
            70_553_706_496,
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            intermediate=28672,
            vocabulary=128256,
        ),
    )
}
