"""A Llama-style model's prefill or decode step as a profile, for any shape, context and precision.

The zoo's profiles are recorded from the model on fake tensors at the workload's own context
(app/bench/profiling.py); a serving question asks for others (a 32k-token context, a 2,000-token
prompt) and for shapes outside the zoo. This module writes the step's operators down from the shape,
one by one as eager PyTorch runs app/bench/models/llama.py, and counts each by the recorder's rules
(FLOPs by formula, bytes as every input and output once, a gather's rows only, one kernel per
operator): tests/perfmodel/test_llm_profile.py checks the list against the recorder's, operator by
operator. The operators are then bucketed like every profile (app/perfmodel/operators.py).

Per layer: RMSNorm (decomposed: pow, mean, add, rsqrt, two multiplies; in bf16/fp16 it computes in
FP32 between two casts), q/k/v projections, rotary positions on q and k (multiply, negate, cat,
multiply, add), the new keys and values copied into the static cache, fused attention over the
cached keys (grouped-query: key/value heads are read once, not repeated), the output projection, a
residual add, RMSNorm, the SwiGLU MLP (gate, SiLU, up, multiply, down) and a residual add. Once per
step: the embedding gather, the rotary table (arange, outer, cat, cos, sin), the final RMSNorm on the
last position, the vocabulary head on it, and the greedy argmax. Pure Python: no torch.
"""

from __future__ import annotations

from app.contracts import LlmShape, Precision, Task
from app.perfmodel.operators import PER_ELEMENT, OpCount, buckets, linear
from app.perfmodel.profile import Memory, OpClass, Profile

BATCHES = (2, 4)
ACTIVATION_BYTES = {Precision.fp32: 4, Precision.bf16: 2, Precision.fp16: 2, Precision.int8: 2, Precision.int4: 2}
"""Bytes per activation and KV cache entry as serving stores them (the runtime builds the model in the
dtype; weight-only int8 and int4 keep the activations and the cache in 16 bits)."""
WEIGHT_BYTES = {
    Precision.fp32: 4.0,
    Precision.bf16: 2.0,
    Precision.fp16: 2.0,
    Precision.int8: 34 / 32,
    Precision.int4: 18 / 32,
}
"""Bytes per weight: weight-only int8 and int4 as llama.cpp's Q8_0 and Q4_0 store them (blocks of 32
weights with one 16-bit scale; AWQ and GPTQ on GPUs, groups of 128 with a scale and a zero point, come
to about the same). Their GEMMs dequantise to 16 bits and compute there: the same FLOPs, fewer bytes."""
FP32, INDEX = 4, 8
MADE_WITH = (
    "app/perfmodel/llm.py: the operators of app/bench/models/llama.py written from the shape, "
    "counted by the recorder's rules"
)


def _op(name: str, op_class: OpClass, flops: float, read: float, written: float) -> OpCount:
    return OpCount(name=name, op_class=op_class, flops=flops, bytes=read + written, kernels=1.0)


def _elementwise(name: str, elements: float, read: float, written: float) -> OpCount:
    return _op(name, OpClass.elementwise, PER_ELEMENT[OpClass.elementwise] * elements, read, written)


def _movement(name: str, read: float, written: float) -> OpCount:
    return _op(name, OpClass.movement, 0.0, read, written)


def _mm(rows: float, inner: float, columns: float, size: int, weight: float) -> OpCount:
    """Activations (rows x inner, ``size`` bytes each) times a weight (inner x columns, ``weight`` bytes each)."""
    read = rows * inner * size + inner * columns * weight
    return _op("mm", OpClass.gemm, 2.0 * rows * inner * columns, read, rows * columns * size)


def _rms_norm(rows: float, hidden: int, size: int) -> list[OpCount]:
    """nn.RMSNorm as eager runs it: in FP32 (cast in and out when the model is not FP32)."""
    n = rows * hidden
    ops = []
    if size != FP32:
        ops.append(_movement("_to_copy", n * size, n * FP32))
    ops += [
        _elementwise("pow", n, n * FP32, n * FP32),
        _op("mean", OpClass.reduction, PER_ELEMENT[OpClass.reduction] * n, n * FP32, rows * FP32),
        _elementwise("add_", rows, rows * FP32, rows * FP32),
        _elementwise("rsqrt", rows, rows * FP32, rows * FP32),
        _elementwise("mul", n, n * FP32 + rows * FP32, n * FP32),
        _elementwise("mul", n, n * FP32 + hidden * size, n * FP32),
    ]
    if size != FP32:
        ops.append(_movement("_to_copy", n * FP32, n * size))
    return ops


def step_ops(shape: LlmShape, task: Task, batch: int, context: int, precision: Precision) -> list[OpCount]:
    """The operators of one prefill (a prompt of ``context`` tokens) or decode (one token per sequence
    with ``context`` tokens cached) step at ``batch`` sequences."""
    if task not in (Task.prefill, Task.decode):
        raise ValueError(f"a generation step is prefill or decode, not {task.value}")
    size, weight = ACTIVATION_BYTES[precision], WEIGHT_BYTES[precision]
    h, dim = shape.hidden, shape.dim
    q_width, kv_width = shape.heads * dim, shape.kv_heads * dim
    new = context if task is Task.prefill else 1  # tokens per sequence this step
    keys = context if task is Task.prefill else context + 1  # cached tokens attended to
    rows = batch * new
    table = new * dim  # the rotary table: new positions x head width

    ops = [
        _op("embedding", OpClass.movement, 0.0, rows * INDEX + rows * h * weight, rows * h * size),
        _movement("arange", 0.0, new * FP32),
        _elementwise("mul", table / 2, new * FP32 + dim / 2 * FP32, table / 2 * FP32),
        _movement("cat", table * FP32, table * FP32),
        _elementwise("cos", table, table * FP32, table * FP32),
    ]
    if size != FP32:
        ops.append(_movement("_to_copy", table * FP32, table * size))
    ops.append(_elementwise("sin", table, table * FP32, table * FP32))
    if size != FP32:
        ops.append(_movement("_to_copy", table * FP32, table * size))

    def rope(heads: int) -> list[OpCount]:
        n = batch * heads * new * dim
        return [
            _elementwise("mul", n, n * size + table * size, n * size),
            _elementwise("neg", n / 2, n / 2 * size, n / 2 * size),
            _movement("cat", n * size, n * size),
            _elementwise("mul", n, n * size + table * size, n * size),
            _elementwise("add", n, 2 * n * size, n * size),
        ]

    written_kv = batch * kv_width * new * size
    attention_flops = 4.0 * batch * shape.heads * new * keys * dim
    attention_read = (batch * q_width * new + 2 * batch * kv_width * keys) * size
    attention_written = batch * q_width * new * size + batch * shape.heads * new * FP32
    for _layer in range(shape.layers):
        ops += _rms_norm(rows, h, size)
        ops += [
            _mm(rows, h, q_width, size, weight),
            _mm(rows, h, kv_width, size, weight),
            _mm(rows, h, kv_width, size, weight),
        ]
        ops += rope(shape.heads) + rope(shape.kv_heads)
        ops += [_movement("copy_", 2 * written_kv, written_kv), _movement("copy_", 2 * written_kv, written_kv)]
        ops.append(
            _op(
                "_scaled_dot_product_flash_attention_for_cpu",
                OpClass.attention,
                attention_flops,
                attention_read,
                attention_written,
            )
        )
        ops += [
            _mm(rows, q_width, h, size, weight),
            _elementwise("add", rows * h, 2 * rows * h * size, rows * h * size),
        ]
        ops += _rms_norm(rows, h, size)
        inner = rows * shape.intermediate
        ops += [
            _mm(rows, h, shape.intermediate, size, weight),
            _elementwise("silu", inner, inner * size, inner * size),
            _mm(rows, h, shape.intermediate, size, weight),
            _elementwise("mul", inner, 2 * inner * size, inner * size),
            _mm(rows, shape.intermediate, h, size, weight),
            _elementwise("add", rows * h, 2 * rows * h * size, rows * h * size),
        ]
    ops += _rms_norm(batch, h, size)
    ops.append(_mm(batch, h, shape.vocabulary, size, weight))
    logits = batch * shape.vocabulary
    ops.append(_op("argmax", OpClass.reduction, PER_ELEMENT[OpClass.reduction] * logits, logits * size, batch * INDEX))
    return ops


def step_rows(task: Task, batch: int, context: int) -> int:
    """The tokens a step computes, the rows its weight products multiply: a decode one per sequence, a
    prefill one per prompt token."""
    return batch * (context if task is Task.prefill else 1)


def activations_bytes(shape: LlmShape, task: Task, batch: int, context: int, precision: Precision) -> float:
    """The step's peak of live activations: the token ids, and the larger of the MLP's working set (the
    residual stream, the normalised input, the gate, SiLU and up outputs) and the last position's logits
    with the final hidden state (a little over what the recorder finds)."""
    size = ACTIVATION_BYTES[precision]
    rows = step_rows(task, batch, context)
    mlp = rows * (3 * shape.intermediate + 2 * shape.hidden) * size + rows * shape.hidden * FP32
    head = batch * (shape.vocabulary * size + shape.hidden * FP32)
    return rows * INDEX + max(mlp, head)


def weights_bytes(shape: LlmShape, precision: Precision) -> float:
    """Every weight in the stored precision, and the rotary inverse frequencies (FP32)."""
    return shape.parameters * WEIGHT_BYTES[precision] + shape.dim / 2 * FP32


def kv_cache_length(task: Task, context: int) -> int:
    """Positions the static cache is allocated for: the prompt (prefill), the context and the new token (decode)."""
    return context if task is Task.prefill else context + 1


def profile(
    name: str, shape: LlmShape, task: Task, precision: Precision, context: int, batches: tuple[int, int] = BATCHES
) -> Profile:
    """The step as a profile (linear in the batch, as every profile), with its memory: the weights, the
    KV cache per sequence, and the activations."""
    first, second = (step_ops(shape, task, b, context, precision) for b in batches)
    size = ACTIVATION_BYTES[precision]
    low, high = batches
    length = kv_cache_length(task, context)
    return Profile(
        workload=name,
        task=task,
        precision=precision,
        shape={"sequence": context},
        buckets=buckets(first, second, batches),
        memory=Memory(
            weights=weights_bytes(shape, precision),
            activations=linear(
                activations_bytes(shape, task, low, context, precision),
                activations_bytes(shape, task, high, context, precision),
                batches,
            ),
            kv_cache=linear(shape.kv_cache_bytes(length, low, size), shape.kv_cache_bytes(length, high, size), batches),
        ),
        batches=batches,
        made_with=MADE_WITH,
        fusion="eager: one kernel per aten operator; attention is the fused SDPA kernel (flash)",
    )
