"""BERT-large fine-tuned on SQuAD at sequence 384, as NVIDIA's DeepLearningExamples run it
(and Lambda's benchmark, which publishes it as ``bert_large_squad``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import WorkloadInfo, workloads
from app.bench.workloads.bert_base import BertBaseWorkload

if TYPE_CHECKING:
    from torch import nn

HIDDEN, LAYERS, HEADS = 1024, 24, 16
TINY_LAYERS = 2


@workloads.register
class BertLargeSquadWorkload(BertBaseWorkload):
    """24 layers, hidden 1024, 16 heads, feed-forward 4096, vocabulary 30,522."""

    info = WorkloadInfo(
        name="bert_large_squad",
        description="BERT-large encoder (24 layers, hidden 1024), sequence 384, SQuAD span head",
        parameters=335_143_938,
        flops_per_sample=231_931_904_000,
        input_names=("input_ids",),
        default_batch_sizes=(1, 8, 32),
    )
    encoder_parameters = 335_141_888
    sequence = 384

    def build(self) -> nn.Module:
        from app.bench.models.bert import BertForQuestionAnswering

        return BertForQuestionAnswering(hidden=HIDDEN, layers=LAYERS, heads=HEADS)

    def build_tiny(self) -> nn.Module:
        """Two of the 24 layers: BERT-large whole is 1.3 GB of weights, too much for a test."""
        from app.bench.models.bert import BertForQuestionAnswering

        return BertForQuestionAnswering(hidden=HIDDEN, layers=TINY_LAYERS, heads=HEADS)
