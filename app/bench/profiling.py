"""A workload's profile from the project's own model: every aten operator of one step, counted.

The step is the one app/bench/runtimes/torch_eager.py times (inference: eval, inference_mode, autocast
for bf16/fp16; training: SGD with momentum 0.9, forward + loss + backward + optimizer step), run on
fake tensors: tensors with shapes, dtypes and strides but no data (torch's FakeTensorMode), so
BERT-large at sequence 384 costs a fraction of a second and no memory, and CPU autocast still picks
each operator's dtype as it would on real tensors. A TorchDispatchMode sees every operator after
autograd and autocast, forward and backward, and counts:

- its class (profile.OpClass): by operator, except that everything the optimiser step runs is
  ``optimizer`` and everything inside an nn.LSTM/GRU/RNN module is ``recurrent``;
- its FLOPs: torch.utils.flop_counter's formulas for matrix products, convolutions and attention;
  the fused LSTM layer by its gates' GEMMs; else a fixed count per element (``PER_ELEMENT``);
- its bytes: every input and output tensor once (distinct elements: a broadcast reads its source
  once); gathers (embedding lookups) read only the rows they gather;
- its kernels: 1, except views and allocations (0), foreach optimiser ops (the launches of
  multi_tensor_apply's chunking on CUDA), a convolution's backward (one per gradient it computes)
  and an LSTM layer (cuDNN's standard algorithm: one input GEMM, then a GEMM and an elementwise
  kernel per step; twice the GEMMs backward);
- whether Python called it: every operator but autocast's casts (a ``_to_copy`` between fp32 and the
  autocast dtype, in a step recorded under autocast, and the same cast back in its backward). Those
  are kernels the dispatcher launches from C++ inside the call that asked for them (``F.linear``
  casting its input, weight and bias), with no Python of their own: the model charges them a
  launch, not a dispatch. The zoo's models cast nothing themselves.

Memory: weights (parameters and buffers, fp32), the activations (inference: the peak of live tensors
the step allocated, plus its input; training: the tensors autograd saves for the backward pass,
de-duplicated by storage, plus the input), gradients and SGD's momentum (each the size of the fp32
parameters). int8 cannot run in eager torch: it is derived from the bf16 step by a written rule
(app/perfmodel/operators.int8_from_bf16).

Imported by scripts/build_profiles.py and the tests only: the server reads the profiles it built.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import flop_registry, sdpa_backward_flop_count, sdpa_flop_count

from app.bench.workloads.base import Size, Workload
from app.contracts import Precision, Task
from app.errors import InvalidInput
from app.perfmodel.operators import (
    CELL_ELEMENTWISE,
    NORM_BACKWARD,
    NORM_INFERENCE,
    PER_ELEMENT,
    SOFTMAX,
    OpCount,
    buckets,
    int8_from_bf16,
    linear,
)
from app.perfmodel.profile import Memory, OpClass, Profile

DEFAULT_BATCHES = (2, 4)
FUSION = (
    "eager: one kernel per aten operator, reading its inputs and writing its outputs; attention is "
    "the fused SDPA kernel (flash); an LSTM layer is cuDNN's (an input GEMM, then a GEMM and an "
    "elementwise kernel per step, re-reading the recurrent weights each step); views move nothing"
)

CONV = ("convolution", "_convolution", "cudnn_convolution", "mkldnn_convolution", "_slow_conv", "slow_conv", "conv_")
GEMM = frozenset(
    {"mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "_addmm_activation", "_int_mm"}
    | {"_scaled_mm", "outer", "addr"}
)
ATTENTION = ("_scaled_dot_product", "_flash_attention", "_efficient_attention", "_cudnn_attention")
RECURRENT = ("mkldnn_rnn_layer", "_cudnn_rnn", "_thnn_fused_lstm", "_thnn_fused_gru", "lstm_cell", "gru_cell")
NORM = (
    "native_batch_norm",
    "_native_batch_norm",
    "_batch_norm",
    "batch_norm",
    "cudnn_batch_norm",
    "native_layer_norm",
    "native_group_norm",
    "_fused_rms_norm",
)
SOFTMAXES = ("_softmax", "_log_softmax", "_safe_softmax")
BATCH_NORMS = frozenset({"native_batch_norm", "native_batch_norm_backward", "_native_batch_norm_legit"})
"""Batch norms whose last boolean argument says whether they run in training mode."""
REDUCTION = frozenset(
    {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "var", "var_mean", "std"}
    | {"std_mean", "logsumexp", "norm", "linalg_vector_norm", "any", "all", "cumsum", "nll_loss_forward"}
    | {"nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward"}
)
MOVEMENT = frozenset(
    {"copy_", "_to_copy", "clone", "cat", "stack", "index", "_unsafe_index", "index_select", "gather"}
    | {"scatter", "scatter_add", "scatter_add_", "index_put", "index_put_", "_index_put_impl_", "index_add"}
    | {"embedding", "embedding_dense_backward", "select_backward", "slice_backward", "constant_pad_nd"}
    | {"repeat", "flip", "roll", "slice_scatter", "select_scatter", "as_strided_scatter", "narrow_copy"}
    | {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "zero_", "new_zeros"}
    | {"new_ones", "new_full", "arange", "scalar_tensor", "lift_fresh_copy", "_reshape_copy"}
)
GATHERS = frozenset({"embedding", "index_select", "gather", "index", "_unsafe_index"})
NO_KERNEL = frozenset(
    {"_unsafe_view", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "lift_fresh"}
    | {"alias", "set_", "resize_", "_local_scalar_dense", "detach_", "_reshape_alias"}
)

FOREACH_TENSORS_PER_LAUNCH = {1: 110, 2: 64, 3: 48, 4: 36, 5: 30}
FOREACH_BLOCKS_PER_LAUNCH = 320
FOREACH_CHUNK = 65536
"""CUDA's multi_tensor_apply: a launch takes at most this many tensors (by how many lists the op
reads) and 320 blocks of 65,536 elements (aten/src/ATen/native/cuda/MultiTensorApply.cuh)."""


@dataclass
class StepCount:
    """One step at one batch size: its operators and the memory it holds."""

    ops: list[OpCount]
    weights: float
    parameters: float
    activations: float
    activations_without_casts: float
    """What the activations would be if the weights were stored in the compute precision."""
    kv_cache: float = 0.0
    """A language model's KV cache (prefill, decode)."""


def profile(
    workload: Workload,
    task: Task,
    precision: Precision,
    batches: tuple[int, int] = DEFAULT_BATCHES,
    size: Size = "standard",
) -> Profile:
    """The workload's profile for one task and precision, solved from steps at two batch sizes."""
    if precision is Precision.int4:
        raise InvalidInput(
            "int4 is a language model's weight-only storage (runtime llama-cpp), measured, not profiled",
            hint="profile in fp32, tf32, bf16, fp16 or int8",
        )
    if precision is Precision.int8 and task is not Task.infer:
        raise InvalidInput("int8 is profiled for inference only", hint="profile training in fp32, tf32, bf16 or fp16")
    recorded = {Precision.int8: Precision.bf16, Precision.tf32: Precision.fp32}.get(precision, precision)
    first, second = (count_step(workload, task, recorded, batch, size) for batch in batches)
    how = f"torch {torch.__version__}; fake tensors under a TorchDispatchMode, every aten operator; "
    how += _recipe(task, recorded)
    if precision is Precision.tf32:
        how += "; tf32 is fp32's profile: the same storage, only the units that multiply differ"
    if precision is Precision.int8:
        first, second = _int8(first), _int8(second)
        how += "; int8 derived from bf16 by rule: conv/GEMM/attention/recurrent bytes halved, "
        how += "no weight casts, 1-byte weights"
    return Profile(
        workload=workload.info.name,
        task=task,
        precision=precision,
        shape=workload.sample_shape(size),
        buckets=buckets(first.ops, second.ops, batches),
        memory=_memory(first, second, batches, task),
        batches=batches,
        made_with=how,
        fusion=FUSION,
    )


def count_step(workload: Workload, task: Task, precision: Precision, batch: int, size: Size = "standard") -> StepCount:
    """Every operator of one step at one batch size, on fake tensors."""
    if task in (Task.prefill, Task.decode):
        return count_generation(workload, task, precision, batch, size)
    fake = FakeTensorMode()
    with fake:
        model = workload.make(size)
        inputs = workload.inputs(batch, size)
        targets = workload.targets(batch, size) if task is Task.train else None
    dtype = RECORDED_AS.get(precision)
    recorder = Recorder(model, inputs, task, autocast_to=dtype)

    def autocast() -> AbstractContextManager[object]:
        return torch.autocast("cpu", dtype=dtype) if dtype is not None else nullcontext()

    if task is Task.train:
        assert targets is not None
        model.train()
        with fake:
            step = _training_step(workload, model, inputs, targets, autocast, precision, recorder)
            step()  # the first step makes the momentum buffers; the second is the steady one
            recorder.clear()
            with recorder:
                step()
    else:
        model.eval()
        # no_grad, not inference_mode: the kernels are the same, and composite operators (linear,
        # lstm) then reach the recorder as what they run, each through autocast as in eager
        with fake, recorder, torch.no_grad(), autocast():
            model(*inputs)
    weights = sum(_nbytes(t) for t in (*model.parameters(), *model.buffers()))
    parameters = sum(_nbytes(p) for p in model.parameters() if p.requires_grad)
    return StepCount(recorder.ops, weights, parameters, recorder.activations(), recorder.activations(casts=False))


GENERATION_DTYPES = {Precision.fp32: torch.float32, Precision.bf16: torch.bfloat16, Precision.fp16: torch.bfloat16}
"""A language model's prefill and decode store the weights in the precision (no autocast), as the
runtime does; fp16 is recorded as bf16 (the same bytes, the same operators)."""


def count_generation(
    workload: Workload, task: Task, precision: Precision, batch: int, size: Size = "standard"
) -> StepCount:
    """A language model's prefill or decode step, the one the runtime times (app/bench/workloads/llama.py),
    at the workload's context: the KV cache is allocated before the step and is not an activation."""
    from app.bench.workloads.llama import LlmWorkload

    if not isinstance(workload, LlmWorkload):
        raise InvalidInput(f"{workload.info.name} is not a language model: it has no {task.value} step")
    fake = FakeTensorMode()
    dtype = GENERATION_DTYPES[precision]
    with fake:
        made = workload.generation(task, batch, size=size, dtype=dtype, device=torch.device("cpu"), wrap=lambda m: m)
    recorder = Recorder(made.module, made.inputs, task, held=made.cache)
    with fake, recorder, torch.no_grad():
        made.module(*made.inputs)
    weights = sum(_nbytes(t) for t in (*made.module.parameters(), *made.module.buffers()))
    activations = recorder.activations()
    return StepCount(recorder.ops, weights, weights, activations, activations, kv_cache=float(made.kv_cache_bytes))


def _training_step(
    workload: Workload,
    model: nn.Module,
    inputs: tuple[torch.Tensor, ...],
    targets: torch.Tensor,
    autocast: Callable[[], AbstractContextManager[object]],
    precision: Precision,
    recorder: Recorder,
) -> Callable[[], None]:
    """The runtime's training step. fp16's GradScaler cannot run on fake tensors (it reads a value
    to decide whether to step), so its device work is run by its own operators: scale the loss,
    unscale the gradients checking for infinities, update the scale."""
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=True)
    scaled = precision is Precision.fp16
    scale = torch.full((), 65536.0)
    growth = torch.zeros((), dtype=torch.int32)

    def step() -> None:
        recorder.phase = "forward"
        optimizer.zero_grad(set_to_none=True)
        with recorder.saving(), autocast():
            loss = workload.loss(model(*inputs), targets)
        recorder.phase = "backward"
        (loss * scale if scaled else loss).backward()
        recorder.phase = "optimizer"
        if scaled:
            found_inf = torch.zeros(())
            grads = [p.grad for p in params if p.grad is not None]
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, scale.reciprocal())
        optimizer.step()
        if scaled:
            torch._amp_update_scale_(scale, growth, found_inf, 2.0, 0.5, 2000)

    return step


RECORDED_AS = {Precision.bf16: torch.bfloat16, Precision.fp16: torch.bfloat16}
"""The autocast dtype each precision is recorded with. fp16 is recorded as bf16: CPU autocast casts
the same operators for both (one list), both are 2 bytes, and this way an LSTM runs as its fused
kernel on every CPU (the fused fp16 LSTM needs AVX512-FP16 or AMX-FP16, which most CPUs lack; without
it torch runs the cell step by step, nothing like cuDNN). fp16 training adds GradScaler's operators."""


class NotRecordableHere(InvalidInput):
    """This machine's torch would run a different step than a GPU does, so its count would mislead."""


STEPWISE_RNN = (
    "torch ran a recurrent layer step by step (a GEMM per time step), where a GPU runs cuDNN's fused "
    "layer: oneDNN's fused bf16 layer needs bf16 support this CPU lacks "
    "(torch.ops.mkldnn._is_mkldnn_bf16_supported() is False here)"
)


class Recorder(TorchDispatchMode):
    """Counts every aten operator that reaches it; see the module's docstring for the rules."""

    def __init__(
        self,
        model: nn.Module,
        inputs: Sequence[torch.Tensor],
        task: Task,
        held: Sequence[torch.Tensor] = (),
        autocast_to: torch.dtype | None = None,
    ) -> None:
        """``held``: tensors allocated before the step that it writes into (a KV cache): not activations.
        ``autocast_to``: the dtype the step runs under autocast to, if it does."""
        super().__init__()
        self.task = task
        self._autocast_casts = frozenset({torch.float32, autocast_to}) if autocast_to is not None else frozenset()
        self.ops: list[OpCount] = []
        self.phase = "forward"
        self._recurrent_depth = 0
        self._weights = {StorageWeakRef(t.untyped_storage()) for t in (*model.parameters(), *model.buffers(), *held)}
        self._inputs = {StorageWeakRef(t.untyped_storage()): _storage_bytes(t) for t in inputs}
        self._live: dict[StorageWeakRef, float] = {}
        self._peak_live = 0.0
        self._saved: dict[StorageWeakRef, float] = {}
        self._casts: dict[StorageWeakRef, float] = {}
        for module in model.modules():
            if isinstance(module, nn.RNNBase):
                module.register_forward_pre_hook(self._enter_recurrent)
                module.register_forward_hook(self._leave_recurrent)

    def _enter_recurrent(self, *_: object) -> None:
        self._recurrent_depth += 1

    def _leave_recurrent(self, *_: object) -> None:
        self._recurrent_depth -= 1

    def clear(self) -> None:
        """Forgets what an earlier step saved and cast."""
        self.ops = []
        self._saved, self._casts, self._live = {}, {}, {}
        self._peak_live = 0.0

    @contextmanager
    def saving(self) -> Iterator[None]:
        """Records what autograd saves for the backward pass (the training activations)."""

        def pack(tensor: torch.Tensor) -> torch.Tensor:
            ref = StorageWeakRef(tensor.untyped_storage())
            if ref not in self._weights:
                self._saved.setdefault(ref, _storage_bytes(tensor))
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            yield

    def activations(self, *, casts: bool = True) -> float:
        """Bytes of activations, with or without autocast's copies of the weights."""
        inputs = sum(self._inputs.values())
        if self.task is Task.train:
            skip = self._inputs.keys() | (set() if casts else self._casts.keys())
            return inputs + sum(n for ref, n in self._saved.items() if ref not in skip)
        # autocast keeps its weight copies to the end of the region: they add to the activations' peak
        return inputs + self._peak_live + (sum(self._casts.values()) if casts else 0.0)

    def __torch_dispatch__(
        self,
        func: torch._ops.OpOverload,
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if func.namespace != "aten":  # prim.device, profiler ranges: no work
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        self._count(func, args, kwargs, out)
        return out

    def _count(self, func: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict[str, Any], out: Any) -> None:
        name = func.overloadpacket.__name__
        inputs = _tensors((args, kwargs))
        outputs = _tensors(out)
        mutable = func._schema.is_mutable
        if not outputs and not mutable:
            return
        if func.is_view or name in NO_KERNEL:
            return
        if self._recurrent_depth > 0 and name in GEMM:
            raise NotRecordableHere(STEPWISE_RNN, hint="record this profile on a CPU with bf16 instructions")
        written = outputs or _written_arguments(func, args, kwargs)
        natural = _classify(name)
        op_class = self._classify(name, natural)
        weight_cast = (
            name == "_to_copy" and bool(inputs) and StorageWeakRef(inputs[0].untyped_storage()) in self._weights
        )
        if weight_cast:
            self._casts[StorageWeakRef(outputs[0].untyped_storage())] = _storage_bytes(outputs[0])
        by_autocast = (
            name == "_to_copy"
            and bool(inputs)
            and bool(outputs)
            and {inputs[0].dtype, outputs[0].dtype} == self._autocast_casts
        )
        self.ops.append(
            OpCount(
                name=name,
                op_class=op_class,
                flops=_flops(func, name, natural, args, kwargs, out, inputs, written),
                bytes=_bytes(name, op_class, args, inputs, written),
                kernels=_kernels(name, op_class, args, kwargs, inputs, written),
                weight_cast=weight_cast,
                called=not by_autocast,
            )
        )
        if self.task is not Task.train:
            self._track_live(outputs)

    def _classify(self, name: str, natural: OpClass) -> OpClass:
        """The optimiser's step and an RNN module's operators form classes of their own."""
        if self.phase == "optimizer":
            return OpClass.optimizer
        if self._recurrent_depth > 0:
            return OpClass.recurrent
        return natural

    def _track_live(self, outputs: Sequence[torch.Tensor]) -> None:
        """The peak of the storages operators allocated that are still referenced (inference), but
        autocast's weight copies: those live to the end and are added whole (activations())."""
        for tensor in outputs:
            ref = StorageWeakRef(tensor.untyped_storage())
            if ref not in self._weights and ref not in self._inputs and ref not in self._casts:
                self._live.setdefault(ref, _storage_bytes(tensor))
        self._live = {ref: n for ref, n in self._live.items() if not ref.expired()}
        self._peak_live = max(self._peak_live, sum(self._live.values()))


def _classify(name: str) -> OpClass:
    """An operator's class by its name alone."""
    if name.startswith(RECURRENT):
        return OpClass.recurrent
    if name.startswith(CONV):
        return OpClass.conv
    if name in GEMM:
        return OpClass.gemm
    if name.startswith(ATTENTION):
        return OpClass.attention
    if name.startswith(NORM):
        return OpClass.norm
    if "pool" in name or name in REDUCTION or name.startswith(SOFTMAXES):
        return OpClass.reduction
    if name in MOVEMENT:
        return OpClass.movement
    return OpClass.elementwise


def _recipe(task: Task, precision: Precision) -> str:
    if task in (Task.prefill, Task.decode):
        stored = str(GENERATION_DTYPES[precision]).removeprefix("torch.")
        return f"{task.value} over a static KV cache at the workload's context, no_grad, weights stored in {stored}"
    mode = "eval + no_grad" if task is Task.infer else "train, SGD momentum 0.9 (foreach)"
    dtype = RECORDED_AS.get(precision)
    cast = f", CPU autocast to {str(dtype).removeprefix('torch.')}" if dtype is not None else ", fp32 storage"
    if precision is Precision.fp16:
        cast += " (2-byte operands as fp16's; see RECORDED_AS)"
    scaler = ", loss scaling as GradScaler does" if precision is Precision.fp16 and task is Task.train else ""
    return mode + cast + scaler


def _int8(step: StepCount) -> StepCount:
    parameters = step.parameters / 4  # fp32 -> int8
    return StepCount(
        ops=int8_from_bf16(step.ops),
        weights=step.weights - step.parameters + parameters,
        parameters=parameters,
        activations=step.activations_without_casts,
        activations_without_casts=step.activations_without_casts,
    )


def _memory(first: StepCount, second: StepCount, batches: tuple[int, int], task: Task) -> Memory:
    trained = task is Task.train
    return Memory(
        weights=first.weights,
        activations=linear(first.activations, second.activations, batches),
        optimizer_state=first.parameters if trained else 0.0,
        gradients=first.parameters if trained else 0.0,
        kv_cache=linear(first.kv_cache, second.kv_cache, batches),
    )


def _tensors(tree: Any) -> list[torch.Tensor]:
    leaves, _spec = tree_flatten(tree)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


def _written_arguments(func: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The tensors an operator writes in place (foreach and in-place operators return none)."""
    written: list[torch.Tensor] = []
    for index, argument in enumerate(func._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[index] if index < len(args) else kwargs.get(argument.name)
            written.extend(_tensors(value))
    return written


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _distinct_bytes(tensor: torch.Tensor) -> int:
    """Bytes an operator reads from a tensor: distinct elements (a broadcast's stride-0 dims once)."""
    elements = math.prod(s for s, st in zip(tensor.shape, tensor.stride(), strict=True) if st != 0)
    return elements * tensor.element_size()


def _storage_bytes(tensor: torch.Tensor) -> float:
    return float(tensor.untyped_storage().nbytes())


def _flops(
    func: torch._ops.OpOverload,
    name: str,
    op_class: OpClass,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    out: Any,
    inputs: Sequence[torch.Tensor],
    written: Sequence[torch.Tensor],
) -> float:
    packet = func.overloadpacket
    if name == "convolution_backward":
        return _convolution_backward_flops(args)
    if packet in flop_registry:
        return float(flop_registry[packet](*args, **kwargs, out_val=out))
    if name.startswith("_scaled_dot_product_flash_attention_for_cpu"):
        if name.endswith("_backward"):
            grad, query, key, value = args[:4]
            return float(sdpa_backward_flop_count(grad.shape, query.shape, key.shape, value.shape))
        return float(sdpa_flop_count(args[0].shape, args[1].shape, args[2].shape))
    if name.startswith(RECURRENT):
        return _recurrent_flops(name, args)
    if name in ("mv", "addmv"):
        matrix = args[1] if name == "addmv" else args[0]
        return 2.0 * int(matrix.numel())
    if name in ("dot", "vdot"):
        return 2.0 * int(args[0].numel())
    if op_class in (OpClass.conv, OpClass.gemm, OpClass.attention):
        raise InvalidInput(f"no FLOP formula for aten.{name}", hint="add one to app/bench/profiling.py")
    if op_class is OpClass.reduction:
        per = SOFTMAX if name.startswith(SOFTMAXES) else PER_ELEMENT[op_class]
        return per * (inputs[0].numel() if inputs else 0)
    per = PER_ELEMENT.get(op_class, 1.0)
    if op_class is OpClass.norm and name.endswith("backward"):
        per = NORM_BACKWARD
    elif name in BATCH_NORMS and not _batch_norm_training(name, args):
        per = NORM_INFERENCE
    return per * sum(t.numel() for t in written)


def _batch_norm_training(name: str, args: Sequence[Any]) -> bool:
    """Whether a batch norm computes batch statistics (training) rather than using its running ones:
    the ``training`` argument (native_batch_norm: the sixth, its backward: ``train``, the eighth)."""
    index = 7 if name.endswith("backward") else 5
    return bool(args[index]) if len(args) > index else True


def _convolution_backward_flops(args: Sequence[Any]) -> float:
    """Each gradient costs the forward's FLOPs (the input's and the weight's), the bias's one add
    per output element. torch's own formula miscounts grouped convolutions (a depthwise backward
    comes out 32x too large), so this one is written from the shapes."""
    grad_output, forward_input, weight = args[0], args[1], args[2]
    transposed, mask = args[7], args[-1]
    per_output = math.prod(weight.shape[1:])  # multiply-adds per output element: (in / groups) x kernel
    macs = (forward_input.numel() if transposed else grad_output.numel()) * per_output
    return float(2 * macs * (bool(mask[0]) + bool(mask[1])) + (grad_output.numel() if mask[2] else 0))


@dataclass(frozen=True, slots=True)
class RnnLayer:
    """The shapes of a fused RNN layer (one layer, one direction) from its operator's arguments."""

    steps: int
    tokens: int
    """steps x batch"""
    gates: int
    """gate rows: 4 x hidden for an LSTM, 3 x hidden for a GRU"""
    width: int
    hidden: int
    recurrent_weight_bytes: int
    itemsize: int

    @classmethod
    def of(cls, args: Sequence[Any]) -> RnnLayer:
        """Its input is the first 3-D tensor, time-major (nn.LSTM transposes a batch-first input
        before the fused layer runs); its input and recurrent weights are the first two 2-D ones."""
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        sequence = next(t for t in tensors if t.dim() == 3)
        w_ih, w_hh = [t for t in tensors if t.dim() == 2][:2]
        return cls(
            steps=int(sequence.shape[0]),
            tokens=int(sequence.shape[0] * sequence.shape[1]),
            gates=int(w_ih.shape[0]),
            width=int(w_ih.shape[1]),
            hidden=int(w_hh.shape[1]),
            recurrent_weight_bytes=_nbytes(w_hh),
            itemsize=sequence.element_size(),
        )


def _recurrent_flops(name: str, args: Sequence[Any]) -> float:
    layer = RnnLayer.of(args)
    gemm = 2.0 * layer.gates * (layer.width + layer.hidden)
    forward = layer.tokens * (gemm + CELL_ELEMENTWISE * layer.hidden)
    return 2.0 * forward if name.endswith("backward") else forward


def _bytes(
    name: str,
    op_class: OpClass,
    args: Sequence[Any],
    inputs: Sequence[torch.Tensor],
    written: Sequence[torch.Tensor],
) -> float:
    out = sum(_nbytes(t) for t in written)
    if name in GATHERS:  # reads the gathered rows and the indices, not the whole table
        indices = sum(_nbytes(t) for t in inputs[1:] if not t.is_floating_point())
        return float(indices + 2 * out)
    if name in ("nll_loss_forward", "nll_loss2d_forward"):  # one element per target
        target = inputs[1]
        return float(_nbytes(target) + target.numel() * inputs[0].element_size() + out)
    read = sum(_distinct_bytes(t) for t in inputs)
    if name in BATCH_NORMS and _batch_norm_training(name, args):
        # statistics first, then the normalisation (backward: the reductions, then the gradient):
        # the activations (and backward the incoming gradient) are read twice
        read += sum(_distinct_bytes(t) for t in inputs[: 2 if name.endswith("backward") else 1])
    if name.startswith(RECURRENT):  # the recurrent weights re-read each step; the gates stored and read
        layer = RnnLayer.of(args)
        read += (layer.steps - 1) * layer.recurrent_weight_bytes + 2 * layer.gates * layer.tokens * layer.itemsize
    return float(read + out)


def _kernels(
    name: str,
    op_class: OpClass,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    inputs: Sequence[torch.Tensor],
    written: Sequence[torch.Tensor],
) -> float:
    if not written or all(t.numel() == 0 for t in written):
        return 0.0
    if name.startswith("_foreach") or name.startswith("_amp_foreach"):
        return float(_foreach_launches(args))
    if name.startswith(RECURRENT):
        steps = RnnLayer.of(args).steps
        return float(2 + 2 * steps if name.endswith("backward") else 1 + 2 * steps)
    if name == "convolution_backward":  # one kernel per gradient: input, weight, bias
        return float(len(written))
    return 1.0


def _foreach_launches(args: Sequence[Any]) -> int:
    """Launches of CUDA's multi_tensor_apply over the operator's tensor lists: a launch is full at
    its tensor limit (when a tensor ends) or at its block limit (a tensor may continue into the next)."""
    lists = [a for a in args if isinstance(a, list | tuple) and a and isinstance(a[0], torch.Tensor)]
    if not lists:
        return 1
    per_launch = FOREACH_TENSORS_PER_LAUNCH.get(len(lists), min(FOREACH_TENSORS_PER_LAUNCH.values()))
    launches = tensors = blocks = 0
    sizes = [t.numel() for t in lists[0] if t.numel() > 0]
    for index, numel in enumerate(sizes):
        tensors += 1
        chunks = math.ceil(numel / FOREACH_CHUNK)
        for chunk in range(chunks):
            blocks += 1
            ends = chunk == chunks - 1
            if (
                (tensors == per_launch and ends)
                or blocks == FOREACH_BLOCKS_PER_LAUNCH
                or (index == len(sizes) - 1 and ends)
            ):
                launches += 1
                blocks, tensors = 0, 0 if ends else 1
    return launches
