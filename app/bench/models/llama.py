"""A Llama-style decoder (Touvron et al. 2023; Meta's Llama 3 configurations) with a static KV cache.

Pre-norm layers of RMSNorm, grouped-query attention with rotary positions (the rotate-half form) and
a SwiGLU MLP, a final RMSNorm and a vocabulary head (tied to the embedding where the configuration
ties it). Its parameter count is the published one for each preset (app/contracts/llm.py).

Two ways to run it:

- ``forward(input_ids)``: every position's logits, no cache (training, and the zoo's generic tests);
- ``forward(input_ids, cache=cache, start=p)``: the tokens at positions p.. are written into the
  static cache (``KvCache``, allocated once at its full length, as serving engines do) and attend to
  everything cached before them; only the last position's logits are computed (what generation
  needs). Prefill is ``start=0`` with the prompt; decode is one token per sequence at ``start=L``.

Attention is ``scaled_dot_product_attention`` with ``enable_gqa`` (key/value heads are shared by
their query heads, never copied), causal for a prompt, unmasked for one new token. Rotary tables
are computed once per call for the positions it covers. Llama 3's long-context frequency scaling
(``rope_scaling``) changes the angles, not the work, and is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from app.contracts.llm import LlmShape

ROPE_THETA = 500_000.0
NORM_EPS = 1e-5


@dataclass
class KvCache:
    """Keys and values of every layer, [batch, kv-heads, length, head-dim] each, allocated once."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]

    @classmethod
    def allocate(
        cls, shape: LlmShape, batch: int, length: int, *, dtype: torch.dtype, device: torch.device | str = "cpu"
    ) -> KvCache:
        def one() -> torch.Tensor:
            return torch.zeros(batch, shape.kv_heads, length, shape.dim, dtype=dtype, device=device)

        return cls([one() for _ in range(shape.layers)], [one() for _ in range(shape.layers)])

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, shape: LlmShape, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.dim = shape.heads, shape.kv_heads, shape.dim
        self.q_proj = nn.Linear(shape.hidden, shape.heads * shape.dim, bias=False, dtype=dtype)
        self.k_proj = nn.Linear(shape.hidden, shape.kv_heads * shape.dim, bias=False, dtype=dtype)
        self.v_proj = nn.Linear(shape.hidden, shape.kv_heads * shape.dim, bias=False, dtype=dtype)
        self.o_proj = nn.Linear(shape.heads * shape.dim, shape.hidden, bias=False, dtype=dtype)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        layer: int,
        cache: KvCache | None,
        start: int,
    ) -> torch.Tensor:
        batch, tokens, _ = x.shape
        q = self.q_proj(x).view(batch, tokens, self.heads, self.dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, tokens, self.kv_heads, self.dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, tokens, self.kv_heads, self.dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            end = start + tokens
            cache.keys[layer][:, :, start:end] = k
            cache.values[layer][:, :, start:end] = v
            k, v = cache.keys[layer][:, :, :end], cache.values[layer][:, :, :end]
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=tokens > 1, enable_gqa=True)
        return self.o_proj(out.transpose(1, 2).reshape(batch, tokens, self.heads * self.dim))


class Mlp(nn.Module):
    def __init__(self, shape: LlmShape, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(shape.hidden, shape.intermediate, bias=False, dtype=dtype)
        self.up_proj = nn.Linear(shape.hidden, shape.intermediate, bias=False, dtype=dtype)
        self.down_proj = nn.Linear(shape.intermediate, shape.hidden, bias=False, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, shape: LlmShape, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.input_norm = nn.RMSNorm(shape.hidden, eps=NORM_EPS, dtype=dtype)
        self.attention = Attention(shape, dtype)
        self.post_attention_norm = nn.RMSNorm(shape.hidden, eps=NORM_EPS, dtype=dtype)
        self.mlp = Mlp(shape, dtype)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layer: int, cache: KvCache | None, start: int
    ) -> torch.Tensor:
        x = x + self.attention(self.input_norm(x), cos, sin, layer, cache, start)
        return x + self.mlp(self.post_attention_norm(x))


class LlamaModel(nn.Module):
    """``dtype``: the weights' (built in it, not converted: a 3B model never exists in FP32 to be cast)."""

    def __init__(self, shape: LlmShape, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.shape = shape
        self.embed_tokens = nn.Embedding(shape.vocabulary, shape.hidden, dtype=dtype)
        self.layers = nn.ModuleList(DecoderLayer(shape, dtype) for _ in range(shape.layers))
        self.norm = nn.RMSNorm(shape.hidden, eps=NORM_EPS, dtype=dtype)
        self.lm_head = nn.Linear(shape.hidden, shape.vocabulary, bias=False, dtype=dtype)
        if shape.tied_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        inverse = 1.0 / ROPE_THETA ** (torch.arange(0, shape.dim, 2, dtype=torch.float32) / shape.dim)
        self.inverse_frequency: torch.Tensor
        self.register_buffer("inverse_frequency", inverse, persistent=False)

    def rotary(self, start: int, tokens: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin of the positions start.. start + tokens, [tokens, head-dim], in the compute dtype."""
        positions = torch.arange(start, start + tokens, device=self.inverse_frequency.device, dtype=torch.float32)
        angles = torch.outer(positions, self.inverse_frequency)
        angles = torch.cat((angles, angles), dim=-1)
        return angles.cos().to(dtype), angles.sin().to(dtype)

    def forward(self, input_ids: torch.Tensor, cache: KvCache | None = None, start: int = 0) -> torch.Tensor:
        """Logits: [batch, tokens, vocabulary] without a cache; [batch, vocabulary] (last position) with one."""
        x = self.embed_tokens(input_ids)
        cos, sin = self.rotary(start, input_ids.shape[1], x.dtype)
        for index, layer in enumerate(self.layers):
            x = layer(x, cos, sin, index, cache, start)
        if cache is not None:
            x = x[:, -1]
        return self.lm_head(self.norm(x))


class NextToken(nn.Module):
    """The model over a static cache from ``start``, then each sequence's greedy next token: the
    generation step a runtime wraps (eagerly or compiled) and the harness times."""

    def __init__(self, model: LlamaModel, cache: KvCache, start: int) -> None:
        super().__init__()
        self.model, self.cache, self.start = model, cache, start

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids, cache=self.cache, start=self.start).argmax(-1)
