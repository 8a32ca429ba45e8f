"""A 2-layer LSTM language model (the DLBench RNN): latency-bound, recurrent."""

from __future__ import annotations

import torch
from torch import nn


class LstmLm(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _state = self.lstm(self.embed(tokens))
        return self.decoder(out)
