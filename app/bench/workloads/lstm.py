"""A 2-layer LSTM language model (the DLBench RNN): latency-bound, recurrent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import Size, TokenWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    import torch
    from torch import nn

HIDDEN, LAYERS = 256, 2


@workloads.register
class LstmWorkload(TokenWorkload):
    """Vocabulary 10,000 (PTB), hidden 256, 2 layers, sequence 32."""

    info = WorkloadInfo(
        name="lstm",
        description="2-layer LSTM language model, hidden 256, vocab 10k, seq 32",
        recurrent=True,
        parameters=6_182_672,
        # torch's FLOP counter sees the decoder GEMM (163,840,000) but not the fused LSTM kernel, so the
        # recurrent part is added by hand: 2 FLOP x 4 gates x (input + hidden) x hidden, per step and layer.
        flops_per_sample=163_840_000 + 2 * 4 * (HIDDEN + HIDDEN) * HIDDEN * 32 * LAYERS,
        input_names=("tokens",),
        default_batch_sizes=(1, 16, 64),
    )
    vocabulary, sequence, tiny_sequence = 10_000, 32, 8

    def build(self) -> nn.Module:
        from app.bench.models.rnn import LstmLm

        return LstmLm(self.vocabulary, HIDDEN, LAYERS)

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        import torch

        return torch.randint(0, self.vocabulary, (batch, self.sequence_length(size)))

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        from torch import nn

        return nn.functional.cross_entropy(output.reshape(-1, self.vocabulary), target.reshape(-1))
