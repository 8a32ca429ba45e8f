"""PyTorch eager, and torch.compile (opt-in; its compile time is reported apart from its speed)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import torch

from app.bench.config import BenchConfig
from app.bench.measure import TimerFn
from app.bench.precision import cpu_unsupported, cuda_unsupported
from app.bench.runtimes.base import Prepared, Runtime, runtimes
from app.bench.workloads import Size, Workload
from app.contracts import MachineSpec, Precision, Task

MIB = 1024 * 1024
AUTOCAST_DTYPES = {Precision.bf16: torch.bfloat16, Precision.fp16: torch.float16}


def device_of(machine: MachineSpec, device_id: str) -> Any:
    for device in machine.devices:
        if device.id == device_id:
            return device
    return None


def precision_unsupported(config: BenchConfig, machine: MachineSpec) -> str | None:
    device = device_of(machine, config.device)
    if device is None:
        return f"this machine has no device {config.device}"
    if config.device == "cpu":
        return cpu_unsupported(config.precision, machine.cpu)
    if not torch.cuda.is_available():
        return f"this torch ({torch.__version__}) cannot use CUDA"
    return cuda_unsupported(config.precision, device)


def cuda_event_timer(device: torch.device) -> TimerFn:
    """Times a step with CUDA events on the device's stream, after the queue is drained."""

    def timer(step: Callable[[], object], _sync: Callable[[], None] | None) -> float:
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1000

    return timer


@contextmanager
def tensor_float32(enabled: bool) -> Iterator[None]:
    """tf32 on or off for this config only, restored after (never left on to speed up an fp32 run)."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


class TorchEager(Runtime):
    NAME = "torch-eager"

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.precision is Precision.int8:
            return "int8 models run through ONNX Runtime's quantization here (runtime onnxruntime-cpu)"
        return precision_unsupported(config, machine)

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        return model

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        device = torch.device(config.device)
        if config.threads and device.type == "cpu":
            torch.set_num_threads(config.threads)
        model = workload.make().to(device)
        inputs = tuple(x.to(device) for x in workload.inputs(config.batch_size, size))
        dtype = AUTOCAST_DTYPES.get(config.precision)

        def autocast() -> AbstractContextManager[object]:
            return torch.autocast(device.type, dtype=dtype) if dtype is not None else nullcontext()

        tf32 = tensor_float32(config.precision is Precision.tf32)
        tf32.__enter__()
        compiled = self.wrap(model)
        if config.task is Task.infer:
            model.eval()

            def step() -> object:
                with torch.inference_mode(), autocast():
                    return compiled(*inputs)

        else:
            model.train()
            targets = workload.targets(config.batch_size, size).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            scaler = torch.amp.GradScaler(device.type, enabled=config.precision is Precision.fp16)

            def step() -> object:
                optimizer.zero_grad(set_to_none=True)
                with autocast():
                    loss = workload.loss(compiled(*inputs), targets)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                return loss

        compile_time = self.first_call(step) if compiled is not model else None
        cuda = device.type == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)

        def close() -> None:
            tf32.__exit__(None, None, None)

        return Prepared(
            step=step,
            sync=(lambda: torch.cuda.synchronize(device)) if cuda else None,
            timer=cuda_event_timer(device) if cuda else None,
            compile_time_s=compile_time,
            peak_device_memory_mb=(lambda: torch.cuda.max_memory_allocated(device) / MIB) if cuda else lambda: None,
            close=close,
        )

    @staticmethod
    def first_call(step: Callable[[], object]) -> float:
        start = time.perf_counter()
        step()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return time.perf_counter() - start


class TorchCompile(TorchEager):
    """torch.compile (inductor). Opt-in: compiling takes minutes on a small CPU."""

    NAME = "torch-compile"

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        compiled: torch.nn.Module = torch.compile(model)  # type: ignore[assignment]
        return compiled


runtimes.add(TorchEager.NAME, TorchEager)
runtimes.add(TorchCompile.NAME, TorchCompile)
