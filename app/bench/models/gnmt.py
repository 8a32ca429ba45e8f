"""GNMT v2 (Wu et al. 2016, as NVIDIA's DeepLearningExamples train it): an LSTM encoder-decoder with
Bahdanau attention.

Encoder: a bidirectional LSTM layer, then three LSTM layers, residual from the third. Decoder: an
LSTM layer whose outputs query a normalised Bahdanau attention over the encoder's outputs, then three
LSTM layers fed with the layer's input and the attention context (residual from the third), then the
vocabulary classifier. Source and target share one embedding. With hidden 1024 and vocabulary 32,320
this is 160,671,297 parameters, the count MLBench publishes for the NVIDIA model.
"""

from __future__ import annotations

import torch
from torch import nn


class BahdanauAttention(nn.Module):
    """Additive attention, its score vector normalised and scaled by a learned scalar."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.query = nn.Linear(hidden, hidden, bias=False)
        self.key = nn.Linear(hidden, hidden, bias=False)
        self.score = nn.Parameter(torch.empty(hidden).uniform_(-0.1, 0.1))
        self.score_scale = nn.Parameter(torch.tensor(hidden**-0.5))
        self.score_bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """(batch, target, hidden) queries over (batch, source, hidden) keys -> one context per query."""
        score = self.score * (self.score_scale / self.score.norm())
        energy = torch.tanh(self.query(queries).unsqueeze(2) + self.key(keys).unsqueeze(1) + self.score_bias)
        weights = torch.softmax(energy @ score, dim=-1)
        return torch.bmm(weights, keys)


class GnmtEncoder(nn.Module):
    def __init__(self, hidden: int, layers: int, dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.bidirectional = nn.LSTM(hidden, hidden, bidirectional=True, batch_first=True)
        self.first = nn.LSTM(2 * hidden, hidden, batch_first=True)
        self.residual = nn.ModuleList(nn.LSTM(hidden, hidden, batch_first=True) for _ in range(layers - 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, _ = self.bidirectional(self.dropout(x))
        x, _ = self.first(self.dropout(x))
        for layer in self.residual:
            out, _ = layer(self.dropout(x))
            x = x + out
        return x


class GnmtDecoder(nn.Module):
    def __init__(self, hidden: int, layers: int, vocab: int, dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention_lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.attention = BahdanauAttention(hidden)
        self.first = nn.LSTM(2 * hidden, hidden, batch_first=True)
        self.residual = nn.ModuleList(nn.LSTM(2 * hidden, hidden, batch_first=True) for _ in range(layers - 2))
        self.classifier = nn.Linear(hidden, vocab)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        x, _ = self.attention_lstm(self.dropout(x))
        attended = self.attention(x, context)
        x, _ = self.first(self.dropout(torch.cat((x, attended), dim=2)))
        for layer in self.residual:
            out, _ = layer(self.dropout(torch.cat((x, attended), dim=2)))
            x = x + out
        return self.classifier(x)


class Gnmt(nn.Module):
    """Source and target token ids (batch, length) -> logits (batch, target length, vocabulary),
    the target fed in whole (teacher forcing), as in training; every sentence is full length."""

    def __init__(self, vocab: int = 32_320, hidden: int = 1024, layers: int = 4, dropout: float = 0.2) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.encoder = GnmtEncoder(hidden, layers, dropout)
        self.decoder = GnmtDecoder(hidden, layers, vocab, dropout)

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        context = self.encoder(self.embedding(source))
        return self.decoder(self.embedding(target), context)
