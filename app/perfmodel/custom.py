"""A workload outside the zoo as a profile the model can run: from its FLOPs and bytes per sample
(and, if known, its operator count), or from its buckets per operator class (what an ONNX graph's
profile gives: app/perfmodel/onnx_profile.py).

Given as FLOPs and bytes, the workload is one bucket on the matrix units (the FLOPs of a
network are nearly all convolutions and GEMMs) whose weights (``parameters`` x bytes per value) are
read once per step and whose other bytes scale with the batch. Its operators each cost a kernel and,
in eager PyTorch, a host dispatch: with no count given, the median count of the zoo's profiles at
that task stands in (said so in the estimate's reasons).

Given with buckets, those are the profile, as a zoo profile's are; their bytes were counted at one
precision (``profiled_at``) and are rescaled to the one predicted by bytes per value (int8: 1-byte
operands for the matrix-unit classes, 2-byte activations elsewhere, the rule of
app/perfmodel/operators.int8_from_bf16).
"""

from __future__ import annotations

import statistics

from app.contracts import CustomBucket, CustomWorkload, Precision, Task
from app.perfmodel.profile import TENSOR_CLASSES, Bucket, Linear, Memory, OpClass, Profile
from app.perfmodel.profile import shipped as profiles

BYTES_PER_VALUE = {
    Precision.fp32: 4,
    Precision.tf32: 4,
    Precision.bf16: 2,
    Precision.fp16: 2,
    Precision.int8: 1,
    Precision.int4: 1,
}
"""int4 is a language model's weight-only storage, never a custom workload's math (no catalog part has
its peak, so nothing is predicted at it): counted as int8 so that a table over every precision holds."""
FALLBACK_OPERATORS = 150
"""Operators per inference step when there are no zoo profiles at all to take a median of."""


def typical_operators(task: Task) -> int:
    """The median operator (kernel) count of the zoo's profiles at ``task``."""
    counts = [p.kernels() for p in profiles().values() if p.task is task]
    return round(statistics.median(counts)) if counts else FALLBACK_OPERATORS


def value_bytes(precision: Precision, op_class: OpClass | None = None) -> int:
    """Bytes per value an operator of ``op_class`` moves at ``precision`` (None: an activation
    outside the matrix units); int8 is bf16 outside the matrix units, as the zoo's int8 profiles."""
    if precision is Precision.int8 and op_class not in TENSOR_CLASSES:
        return BYTES_PER_VALUE[Precision.bf16]
    return BYTES_PER_VALUE[precision]


TRAINED_BYTES_PER_PARAMETER = 4
"""Training keeps FP32 weights, FP32 gradients and one FP32 momentum per parameter at every precision
(SGD with momentum under autocast, the zoo's training recipe in app/bench/profiling.py)."""


def memory(custom: CustomWorkload, precision: Precision, task: Task, activations_per_sample: float) -> Memory:
    """What a step needs on the device: the weights at ``precision`` for inference; for training FP32
    weights, gradients and momentum (``TRAINED_BYTES_PER_PARAMETER`` each). An optimiser with more
    state (Adam keeps two moments) needs more than this says."""
    if task is Task.train:
        state = custom.parameters * TRAINED_BYTES_PER_PARAMETER
        return Memory(
            weights=state,
            activations=Linear(per_sample=activations_per_sample),
            optimizer_state=state,
            gradients=state,
        )
    return Memory(
        weights=custom.parameters * BYTES_PER_VALUE[precision], activations=Linear(per_sample=activations_per_sample)
    )


def profile(custom: CustomWorkload, precision: Precision, task: Task = Task.infer) -> Profile:
    if custom.buckets is not None:
        return _profiled(custom, custom.buckets, precision, task)
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
        memory=memory(custom, precision, task, per_sample),
        batches=(1, 1),
        made_with="app/perfmodel/custom.py from the FLOPs and bytes per sample given",
    )


def _profiled(custom: CustomWorkload, given: list[CustomBucket], precision: Precision, task: Task) -> Profile:
    counted = custom.profiled_at

    def scale(op_class: OpClass | None) -> float:
        return value_bytes(precision, op_class) / value_bytes(counted, op_class)

    buckets = [
        Bucket(
            op_class=b.op_class,
            flops=Linear(per_sample=b.flops_per_sample, per_step=b.flops_per_step),
            bytes=Linear(per_sample=b.bytes_per_sample * factor, per_step=b.bytes_per_step * factor),
            kernels=b.kernels,
            operators=b.operators,
        )
        for b in given
        for factor in (scale(b.op_class),)
    ]
    activations = custom.activation_bytes_per_sample
    if activations is None:
        activations = max(0.0, custom.bytes_per_sample - custom.parameters * BYTES_PER_VALUE[counted])
    return Profile(
        workload=custom.name,
        task=task,
        precision=precision,
        shape={},
        buckets=buckets,
        memory=memory(custom, precision, task, activations * scale(None)),
        batches=(1, 1),
        made_with=f"app/perfmodel/custom.py from the buckets given, counted at {counted.value}",
    )
