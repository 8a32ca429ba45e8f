"""The torch profiler: what it counts per operator, that its lines hold at a third batch, and that its
memory estimate is near what a real step takes."""

from __future__ import annotations

from typing import ClassVar

import pytest
import torch

from app.bench.profiling import GEMM, NotRecordableHere, count_step, profile
from app.bench.workloads import get_workload
from app.bench.workloads.base import MlpWorkload, WorkloadInfo
from app.contracts import Precision, Task
from app.perfmodel.profile import OpClass


class Tiny(MlpWorkload):
    """4 -> 8 -> 2 with a sigmoid between: three operators whose bytes can be counted by hand."""

    info = WorkloadInfo(name="tiny_mlp", description="test", parameters=58, flops_per_sample=2 * (4 * 8 + 8 * 2))
    widths: ClassVar[tuple[int, ...]] = (4, 8, 2)


def _classes(ops: list, op_class: OpClass) -> list:
    return [op for op in ops if op.op_class is op_class]


def test_each_kernel_reads_its_inputs_and_writes_its_output() -> None:
    step = count_step(Tiny(), Task.infer, Precision.fp32, batch=3)
    assert [op.name for op in step.ops] == ["addmm", "sigmoid", "addmm"]  # the transposes are views
    first = step.ops[0]
    # bias 8 + input 3x4 + weight 4x8 read, output 3x8 written, fp32
    assert first.bytes == 4 * (8 + 3 * 4 + 4 * 8 + 3 * 8)
    assert first.flops == 2 * 3 * 4 * 8 and first.op_class is OpClass.gemm and first.kernels == 1
    assert step.ops[1].op_class is OpClass.elementwise and step.ops[1].bytes == 4 * (3 * 8 * 2)
    assert step.weights == 4 * 58


@pytest.mark.parametrize(("task", "precision"), [(Task.infer, Precision.bf16), (Task.train, Precision.fp32)])
def test_flops_bytes_and_memory_are_lines_in_the_batch(task: Task, precision: Precision) -> None:
    """Solved from batches 2 and 4, the profile predicts batch 9 exactly; kernels do not grow."""
    workload = get_workload("resnet20")
    made = profile(workload, task, precision, batches=(2, 4))
    third = count_step(workload, task, precision, batch=9)
    assert made.flops(9) == pytest.approx(sum(op.flops for op in third.ops), rel=1e-9)
    assert made.bytes(9) == pytest.approx(sum(op.bytes for op in third.ops), rel=1e-9)
    assert made.kernels() == sum(op.kernels for op in third.ops)
    assert made.memory.activations.at(9) == pytest.approx(third.activations, rel=1e-6)
    assert len(made.buckets) <= 40


@pytest.mark.parametrize("name", ["resnet20", "mobilenet_v2", "lstm"])
def test_matrix_flops_are_the_declared_ones_and_training_triples_them(name: str) -> None:
    """mobilenet_v2 has grouped convolutions, whose backward torch's own formula miscounts; lstm
    runs fused LSTM layers, counted by their gates' GEMMs."""
    workload = get_workload(name)
    infer = profile(workload, Task.infer, Precision.fp32)
    train = profile(workload, Task.train, Precision.fp32)

    def matrix(p: object) -> float:
        return sum(b.flops.at(1) for b in p.buckets if b.op_class in (OpClass.conv, OpClass.gemm, OpClass.recurrent))  # type: ignore[attr-defined]

    assert matrix(infer) == pytest.approx(workload.info.flops_per_sample, rel=0.02)
    # the first layer computes no gradient for the input, so a little under 3x
    assert 2.8 < matrix(train) / matrix(infer) <= 3.0
    assert train.memory.gradients == train.memory.optimizer_state > 0
    assert infer.memory.gradients == infer.memory.optimizer_state == 0


def test_a_training_step_counts_backward_and_the_optimiser() -> None:
    step = count_step(get_workload("resnet20"), Task.train, Precision.fp32, batch=2)
    names = {op.name for op in step.ops}
    assert {"convolution", "convolution_backward", "native_batch_norm_backward"} <= names
    optimizer = _classes(step.ops, OpClass.optimizer)
    assert {op.name for op in optimizer} == {"_foreach_mul_", "_foreach_add_"}  # steady-state SGD momentum
    assert sum(op.flops for op in optimizer) == 3 * 269_722  # mul and add into the momentum, add into the weights


def test_a_batch_norm_reads_twice_in_training_and_is_an_affine_map_in_eval() -> None:
    workload = get_workload("resnet20")
    evaluated = [
        op for op in count_step(workload, Task.infer, Precision.fp32, batch=2).ops if op.op_class is OpClass.norm
    ]
    trained = count_step(workload, Task.train, Precision.fp32, batch=2).ops
    forward = [op for op in trained if op.name == "native_batch_norm"]
    backward = [op for op in trained if op.name == "native_batch_norm_backward"]
    first, train_first, back_first = evaluated[0], forward[0], backward[-1]  # backward runs last to first
    elements = 2 * 16 * 32 * 32  # the first norm: batch 2, 16 channels, 32 x 32
    channels = 4 * 16  # weight, bias, running mean and variance
    assert first.flops == 2 * elements  # scale and shift with the running statistics
    assert first.bytes == 4 * (2 * elements + channels)  # input read once, output written
    assert train_first.flops == pytest.approx(5 * elements, rel=0.01)  # and the saved mean and inverse std
    # statistics, then the normalisation: the input read twice (plus the saved mean and inverse std)
    assert train_first.bytes >= 4 * (3 * elements + channels)
    # the reductions, then the gradient: the incoming gradient and the input each read twice
    assert back_first.bytes >= 4 * 5 * elements


def test_an_lstm_layer_is_one_fused_operator_with_cudnn_kernels() -> None:
    step = count_step(get_workload("lstm"), Task.infer, Precision.fp32, batch=2)
    layers = [op for op in step.ops if op.name == "mkldnn_rnn_layer"]
    assert len(layers) == 2 and all(op.op_class is OpClass.recurrent for op in layers)
    assert all(op.kernels == 1 + 2 * 32 for op in layers)  # input GEMM, then GEMM + cell per step
    per_layer = 2 * 2 * 4 * 256 * (256 + 256) * 32  # batch 2, 2 FLOP x 4 gates x (in + hidden) x hidden, 32 steps
    assert layers[0].flops == pytest.approx(per_layer, rel=0.02)


def test_autocast_casts_weights_and_int8_drops_the_casts() -> None:
    workload = get_workload("resnet20")
    bf16 = count_step(workload, Task.infer, Precision.bf16, batch=2)
    casts = [op for op in bf16.ops if op.weight_cast]
    assert casts and all(op.name == "_to_copy" for op in casts)
    fp32, tf32 = (profile(workload, Task.infer, p) for p in (Precision.fp32, Precision.tf32))
    assert fp32.buckets == tf32.buckets and "tf32" in tf32.made_with
    bf16_profile, int8 = (profile(workload, Task.infer, p) for p in (Precision.bf16, Precision.int8))
    assert int8.flops(8) == pytest.approx(bf16_profile.flops(8))
    matrix = {
        p.precision: sum(b.bytes.at(8) for b in p.buckets if b.op_class is OpClass.conv) for p in (bf16_profile, int8)
    }
    assert matrix[Precision.int8] == pytest.approx(matrix[Precision.bf16] / 2)
    assert int8.kernels() == bf16_profile.kernels() - len(casts)
    assert int8.memory.weights < bf16_profile.memory.weights / 3
    with pytest.raises(Exception, match="inference only"):
        profile(workload, Task.train, Precision.int8)


def test_autocasts_casts_are_kernels_of_the_call_that_asked_not_calls_of_their_own() -> None:
    """A linear layer under autocast casts its input, weight and bias inside its own C++ call: the host
    pays Python for the layer, a launch for each cast (app/perfmodel/model.py)."""
    workload = get_workload("distilbert")
    fp32, bf16 = (profile(workload, Task.infer, p) for p in (Precision.fp32, Precision.bf16))
    step = count_step(workload, Task.infer, Precision.bf16, batch=2)
    casts = [op for op in step.ops if op.name == "_to_copy"]
    assert casts and not any(op.called for op in casts)
    assert all(op.called for op in step.ops if op.name != "_to_copy")
    assert sum(b.operators for b in bf16.buckets) == sum(b.operators for b in fp32.buckets)
    assert bf16.kernels() == fp32.kernels() + len(casts)


def test_a_recurrent_layer_run_step_by_step_is_refused_not_counted() -> None:
    """Where torch's CPU has no fused bf16 LSTM kernel it runs GNMT's decoder layers a step at a time,
    which is not what cuDNN runs: the profiler says so instead of counting it."""
    workload = get_workload("gnmt")
    if torch.ops.mkldnn._is_mkldnn_bf16_supported():
        step = count_step(workload, Task.infer, Precision.bf16, batch=2)
        assert not any(op.name in GEMM for op in step.ops if op.op_class is OpClass.recurrent)
    else:
        with pytest.raises(NotRecordableHere, match="step by step"):
            count_step(workload, Task.infer, Precision.bf16, batch=2)
    assert count_step(workload, Task.infer, Precision.fp32, batch=2).ops  # fp32's fused kernel is everywhere


def measured_peak(name: str, batch: int, task: Task) -> float:
    """The most bytes a real CPU step held at once beyond what it started with, as torch's profiler
    records every allocation and free of the CPU allocator (after a first step made the momentum)."""
    workload = get_workload(name)
    model, inputs, targets = workload.make(), workload.inputs(batch), workload.targets(batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step() -> None:
        if task is Task.train:
            optimizer.zero_grad(set_to_none=True)
            workload.loss(model.train()(*inputs), targets).backward()
            optimizer.step()
        else:
            with torch.inference_mode():
                model.eval()(*inputs)

    step()
    optimizer.zero_grad(set_to_none=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted(
        (e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns()
    )
    held = peak = 0
    for event in events:
        held += event.nbytes()
        peak = max(peak, held)
    return float(peak)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "batch", "task"), [("resnet20", 256, Task.train), ("resnet50", 16, Task.infer)])
def test_memory_estimate_is_near_a_real_steps_peak(name: str, batch: int, task: Task) -> None:
    """The profile's activations (and gradients, in training) against what a real step allocated."""
    memory = profile(get_workload(name), task, Precision.fp32).memory
    estimate = memory.activations.at(batch) + memory.gradients
    measured = measured_peak(name, batch, task)
    assert 0.7 < estimate / measured < 1.4, (estimate, measured)
