"""BERT-base fine-tuned on SQuAD at sequence 384: what NVIDIA's DeepLearningExamples (and Lambda's
benchmark, which runs them) call ``bert_base_squad``. The model is bert_base's; the sequence is 3x."""

from __future__ import annotations

from app.bench.workloads.base import WorkloadInfo, workloads
from app.bench.workloads.bert_base import BertBaseWorkload


@workloads.register
class BertBaseSquadWorkload(BertBaseWorkload):
    info = WorkloadInfo(
        name="bert_base_squad",
        description="BERT-base encoder, sequence 384, SQuAD span head (NVIDIA DeepLearningExamples run_squad)",
        parameters=109_483_778,
        flops_per_sample=65_232_175_104,
        input_names=("input_ids",),
    )
    sequence = 384
