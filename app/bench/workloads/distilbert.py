"""DistilBERT-base with a SQuAD span head, sequence 128: the 6-layer distillation student of BERT-base
(Sanh et al. 2019: half the layers, no token-type embeddings or pooler). A workload of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import WorkloadInfo, workloads
from app.bench.workloads.bert_base import BertBaseWorkload

if TYPE_CHECKING:
    from torch import nn

LAYERS, TINY_LAYERS = 6, 2


@workloads.register
class DistilBertWorkload(BertBaseWorkload):
    info = WorkloadInfo(
        name="distilbert",
        description="DistilBERT-base (6 layers), sequence 128, SQuAD span head: the distillation student of BERT-base",
        parameters=66_364_418,
        flops_per_sample=10_872_029_184,
        input_names=("input_ids",),
        student_of="bert_base",
    )
    encoder_parameters = 66_362_880

    def build(self) -> nn.Module:
        from app.bench.models.bert import BertForQuestionAnswering

        return BertForQuestionAnswering(layers=LAYERS, distilled=True)

    def build_tiny(self) -> nn.Module:
        """Two layers, as bert_base_squad's tiny model: the tests exercise the architecture, not its depth."""
        from app.bench.models.bert import BertForQuestionAnswering

        return BertForQuestionAnswering(layers=TINY_LAYERS, distilled=True)
