"""Is the machine quiet enough to measure? Other load would be measured as the hardware's speed."""

from __future__ import annotations

import importlib
from typing import Any

import psutil

SAMPLE_S = 1.0


def other_gpu_processes(binding: Any | None = None) -> list[str]:
    """'cuda:N pid P' for every compute process on a GPU; empty without NVML."""
    try:
        nvml: Any = binding if binding is not None else importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception:
        return []
    try:
        found = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            for process in nvml.nvmlDeviceGetComputeRunningProcesses(handle):
                found.append(f"cuda:{index} pid {process.pid}")
        return found
    finally:
        nvml.nvmlShutdown()


def busy_reason(max_busy_cpu_percent: float) -> str | None:
    """Why the machine is not quiet now, or None when it is."""
    cpu = psutil.cpu_percent(interval=SAMPLE_S)
    if cpu > max_busy_cpu_percent:
        return f"other processes use {cpu:.0f}% of the CPUs (the limit is {max_busy_cpu_percent:.0f}%)"
    gpu = other_gpu_processes()
    if gpu:
        return f"other processes run on the GPUs: {', '.join(gpu[:5])}"
    return None
