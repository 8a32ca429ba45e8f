"""GNMT v2, NVIDIA DeepLearningExamples' translation model (WMT16 English-German): recurrent.

One sample is one sentence pair of 50 source and 50 target tokens (the training length limit), every
sentence full length. DeepLearningExamples (and Lambda's benchmark, which runs them) report tokens/s
as source + target tokens per second, so a sample here is 100 of their tokens; real WMT sentences
are shorter, so relate a published figure by tokens, not by sentences. Inference here is the
teacher-forced forward pass (the target fed in whole), not beam search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import Size, TokenWorkload, WorkloadInfo, lstm_flops, workloads

if TYPE_CHECKING:
    import torch
    from torch import nn

HIDDEN, LAYERS, VOCABULARY, SEQUENCE = 1024, 4, 32_320, 50
TINY_HIDDEN = 64

RECURRENT_FLOPS = (
    2 * lstm_flops(HIDDEN, HIDDEN, SEQUENCE)  # the bidirectional encoder layer
    + lstm_flops(2 * HIDDEN, HIDDEN, SEQUENCE)  # encoder layer 2 reads both directions
    + 2 * lstm_flops(HIDDEN, HIDDEN, SEQUENCE)  # encoder layers 3 and 4
    + lstm_flops(HIDDEN, HIDDEN, SEQUENCE)  # the decoder's attention LSTM
    + 3 * lstm_flops(2 * HIDDEN, HIDDEN, SEQUENCE)  # decoder layers 2-4 read the output and the context
)
"""What torch's FLOP counter cannot see: the LSTM layers' gate GEMMs, per sentence pair."""


@workloads.register
class GnmtWorkload(TokenWorkload):
    """Hidden 1024, 4 encoder layers (the first bidirectional), 4 decoder layers with attention."""

    info = WorkloadInfo(
        name="gnmt",
        description=(
            "GNMT v2 (NVIDIA DeepLearningExamples), hidden 1024, vocab 32,320; "
            "one sample = a sentence pair of 50 + 50 tokens"
        ),
        recurrent=True,
        parameters=160_671_297,
        # torch's FLOP counter sees the classifier, the attention's projections and its context bmm
        flops_per_sample=3_524_403_200 + RECURRENT_FLOPS,
        input_names=("source", "target"),
        default_batch_sizes=(1, 32, 128),
    )
    vocabulary, sequence, tiny_sequence = VOCABULARY, SEQUENCE, 8

    def build(self) -> nn.Module:
        from app.bench.models.gnmt import Gnmt

        return Gnmt(VOCABULARY, HIDDEN, LAYERS)

    def build_tiny(self) -> nn.Module:
        """Hidden 64: the structure whole, without 160M weights to train and export in a test."""
        from app.bench.models.gnmt import Gnmt

        return Gnmt(VOCABULARY, TINY_HIDDEN, LAYERS)

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        import torch

        shape = (batch, self.sequence_length(size))
        return (torch.randint(0, self.vocabulary, shape), torch.randint(0, self.vocabulary, shape))

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        import torch

        return torch.randint(0, self.vocabulary, (batch, self.sequence_length(size)))

    def sample_shape(self, size: Size = "standard") -> dict[str, int]:
        return {"source_sequence": self.sequence_length(size), "target_sequence": self.sequence_length(size)}

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        from torch import nn

        return nn.functional.cross_entropy(output.reshape(-1, self.vocabulary), target.reshape(-1))
