"""BERT-base with a SQuAD span head, sequence 128 (app/bench/models/bert.py has the encoder)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import Size, TokenWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    import torch
    from torch import nn

TINY_LAYERS = 2
"""The encoder layers of the tests' tiny BERTs: they exercise the architecture, not its depth."""


@workloads.register
class BertBaseWorkload(TokenWorkload):
    info = WorkloadInfo(
        name="bert_base",
        description="BERT-base encoder, sequence 128, SQuAD span head",
        parameters=109_483_778,
        flops_per_sample=21_744_844_800,
        input_names=("input_ids",),
    )
    encoder_parameters = 109_482_240
    vocabulary, sequence, tiny_sequence = 30522, 128, 16

    def build(self) -> nn.Module:
        from app.bench.models.bert import BertForQuestionAnswering

        return BertForQuestionAnswering()

    def build_tiny(self) -> nn.Module:
        """TINY_LAYERS of BERT-base's layers (hidden 768, 12 heads)."""
        from app.bench.models.bert import BertForQuestionAnswering

        return BertForQuestionAnswering(layers=TINY_LAYERS)

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        import torch

        return torch.randint(0, self.sequence_length(size), (batch, 2))

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        from torch import nn

        start, end = output[..., 0], output[..., 1]
        return (nn.functional.cross_entropy(start, target[:, 0]) + nn.functional.cross_entropy(end, target[:, 1])) / 2
