"""BERT (Devlin et al. 2019) with a SQuAD span head, as in the reference implementation.

The encoder mirrors the reference BertModel layer for layer (word/position/type embeddings,
post-norm layers of multi-head attention and a 4x-wide GELU feed-forward, a tanh pooler), so its
parameter count is the reference's: 109,482,240 for BERT-base (12 layers, hidden 768, 12 heads) and
335,141,888 for BERT-large (24 layers, hidden 1024, 16 heads); the span head (hidden -> start/end)
adds 2 x hidden + 2. DistilBERT (Sanh et al. 2019) is the same encoder with 6 layers and neither
token-type embeddings nor a pooler: 66,362,880.

A layer's attention may be narrower than the hidden size (``heads`` x 64 after structured pruning
removed heads, app/bench/models/pruning.py): each head stays hidden / the original heads wide.
"""

from __future__ import annotations

import torch
from torch import nn


class BertLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _width = x.shape
        return x.view(batch, seq, self.heads, self.head_size).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _hidden = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        context = nn.functional.scaled_dot_product_attention(q, k, v)
        context = context.transpose(1, 2).reshape(batch, seq, self.heads * self.head_size)
        x = self.attention_norm(x + self.attention_out(context))
        return self.output_norm(x + self.output(nn.functional.gelu(self.intermediate(x))))


class BertModel(nn.Module):
    def __init__(
        self,
        vocab: int = 30522,
        hidden: int = 768,
        layers: int = 12,
        heads: int = 12,
        intermediate: int = 3072,
        *,
        distilled: bool = False,
    ) -> None:
        """``distilled``: DistilBERT's encoder, without token-type embeddings and pooler."""
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(512, hidden)
        self.token_type_embeddings = None if distilled else nn.Embedding(2, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, intermediate) for _ in range(layers))
        self.pooler = None if distilled else nn.Linear(hidden, hidden)

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        seq = input_ids.shape[1]
        positions = torch.arange(seq, device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        if self.token_type_embeddings is not None:
            x = x + self.token_type_embeddings(torch.zeros_like(input_ids))
        x = self.embedding_norm(x)
        for layer in self.layers:
            x = layer(x)
        return x, torch.tanh(self.pooler(x[:, 0])) if self.pooler is not None else None


class BertForQuestionAnswering(nn.Module):
    def __init__(self, hidden: int = 768, layers: int = 12, heads: int = 12, *, distilled: bool = False) -> None:
        super().__init__()
        self.bert = BertModel(hidden=hidden, layers=layers, heads=heads, intermediate=4 * hidden, distilled=distilled)
        self.span = nn.Linear(hidden, 2)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        sequence, _pooled = self.bert(input_ids)
        return self.span(sequence)
