"""A 2-layer LSTM language model (the DLBench RNN): latency-bound, recurrent."""

from __future__ import annotations

import torch
from torch import nn

from app.bench.workloads.base import Size, Workload, workloads


class LstmLm(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _state = self.lstm(self.embed(tokens))
        return self.decoder(out)


@workloads.register("lstm")
class LstmWorkload(Workload):
    """Vocabulary 10,000 (PTB), hidden 256, 2 layers, sequence 32."""

    NAME = "lstm"
    description = "2-layer LSTM language model, hidden 256, vocab 10k, seq 32"
    parameters = 6_182_672
    # torch's FLOP counter sees the decoder GEMM (163,840,000) but not the fused LSTM kernel, so the
    # recurrent part is added by hand: 2 FLOP x 4 gates x (input + hidden) x hidden, per step and layer.
    flops_per_sample = 163_840_000 + 2 * 4 * (256 + 256) * 256 * 32 * 2
    VOCAB, HIDDEN, LAYERS, SEQ, TINY_SEQ = 10_000, 256, 2, 32, 8
    input_names = ("tokens",)
    default_batch_sizes = (1, 16, 64)

    def build(self) -> nn.Module:
        return LstmLm(self.VOCAB, self.HIDDEN, self.LAYERS)

    def _seq(self, size: Size) -> int:
        return self.TINY_SEQ if size == "tiny" else self.SEQ

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        return (torch.randint(0, self.VOCAB, (batch, self._seq(size))),)

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        return torch.randint(0, self.VOCAB, (batch, self._seq(size)))

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(output.reshape(-1, self.VOCAB), target.reshape(-1))
