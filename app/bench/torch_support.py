"""What the torch-based runtimes and primitives share: CUDA timing, tf32 switching, device checks.

Plug-in modules import this inside their methods, so listing them never imports torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from app.bench.config import BenchConfig
from app.bench.measure import TimerFn
from app.bench.precision import cpu_unsupported, cuda_unsupported
from app.contracts import MachineSpec, Precision

MIB = 1024 * 1024
AUTOCAST_DTYPES = {Precision.bf16: torch.bfloat16, Precision.fp16: torch.float16}


def device_unsupported(config: BenchConfig, machine: MachineSpec) -> str | None:
    """Why torch cannot run on the config's device here (no such device, or no CUDA), or None."""
    if machine.device(config.device) is None:
        return f"this machine has no device {config.device}"
    if config.device != "cpu" and not torch.cuda.is_available():
        return f"this torch ({torch.__version__}) cannot use CUDA"
    return None


def precision_unsupported(config: BenchConfig, machine: MachineSpec) -> str | None:
    """Why the config's device cannot run its precision natively, or None."""
    reason = device_unsupported(config, machine)
    if reason:
        return reason
    device = machine.device(config.device)
    assert device is not None
    if config.device == "cpu":
        return cpu_unsupported(config.precision, machine.cpu)
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


def device_sync(device: torch.device) -> tuple[Callable[[], None] | None, TimerFn | None]:
    """The sync and timer for a device; on a GPU the peak-memory count also starts here, after the
    buffers are allocated, so a config's peak is its own and not an earlier config's."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return (lambda: torch.cuda.synchronize(device)), cuda_event_timer(device)
    return None, None


def peak_device_memory_mb(device: torch.device) -> float | None:
    return torch.cuda.max_memory_allocated(device) / MIB if device.type == "cuda" else None


@contextmanager
def tensor_float32(enabled: bool) -> Iterator[None]:
    """tf32 on or off for this config only, restored after (never left on to speed up an fp32 run)."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


def use_threads(config: BenchConfig, device: torch.device) -> None:
    if config.threads and device.type == "cpu":
        torch.set_num_threads(config.threads)
