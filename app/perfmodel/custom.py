"""A workload outside the zoo as a profile the model can run: from its FLOPs and bytes per sample
(and, if known, its operator count), or from an ONNX graph (app/perfmodel/onnx_profile.py).

Given as FLOPs and bytes, the workload is one bucket on the matrix units (the FLOPs of a
network are nearly all convolutions and GEMMs) whose weights (``parameters`` x bytes per value) are
read once per step and whose other bytes scale with the batch. Its operators each cost a kernel and,
in eager PyTorch, a host dispatch: with no count given, the median count of the zoo's profiles at
that task stands in (said so in the estimate's reasons).
"""

from __future__ import annotations

import statistics

from app.contracts import CustomWorkload, Precision, Task
from app.perfmodel.profile import Bucket, Linear, Memory, OpClass, Profile
from app.perfmodel.profile import shipped as profiles

BYTES_PER_VALUE = {Precision.fp32: 4, Precision.tf32: 4, Precision.bf16: 2, Precision.fp16: 2, Precision.int8: 1}
FALLBACK_OPERATORS = 150
"""Operators per inference step when there are no zoo profiles at all to take a median of."""


def typical_operators(task: Task) -> int:
    """The median operator (kernel) count of the zoo's profiles at ``task``."""
    counts = [p.kernels() for p in profiles().values() if p.task is task]
    return round(statistics.median(counts)) if counts else FALLBACK_OPERATORS


def profile(custom: CustomWorkload, precision: Precision, task: Task = Task.infer) -> Profile:
    weights = custom.parameters * BYTES_PER_VALUE[precision]
    per_sample = max(0.0, custom.bytes_per_sample - weights)
    operators = custom.operators or typical_operators(task)
    return Profile(
        workload=custom.name,
        task=task,
        precision=precision,
        shape={},
        buckets=[
            Bucket(
                op_class=OpClass.gemm,
                flops=Linear(per_sample=custom.flops_per_sample),
                bytes=Linear(per_sample=per_sample, per_step=min(weights, custom.bytes_per_sample)),
                kernels=float(operators),
                operators=operators,
            )
        ],
        memory=Memory(weights=weights, activations=Linear(per_sample=per_sample)),
        batches=(1, 1),
        made_with="app/perfmodel/custom.py from the FLOPs and bytes per sample given",
    )
