"""A config: one point of a suite's grid (workload x task x runtime x device x precision x batch x
threads x devices x variant)."""

from __future__ import annotations

from dataclasses import dataclass

from app.contracts import Precision, Task, workload_label


@dataclass(frozen=True, slots=True)
class BenchConfig:
    workload: str
    task: Task | None
    """None for a primitive (a GEMM has no task)."""
    runtime: str
    device: str
    """The first device; a config of several devices runs on this one and the next ``devices - 1``."""
    precision: Precision
    batch_size: int
    """Per device: a data-parallel step trains ``devices x batch_size`` samples."""
    threads: int | None = None
    """Per process: each data-parallel rank on the CPU runs this many."""
    devices: int = 1
    """Data-parallel ranks measured together (app/bench/data_parallel.py); 1 is the plain path."""
    context: int | None = None
    """A language model's prompt (prefill), KV-cache length (decode) or sequence (train); None: its own."""
    variant: str | None = None
    """The model variant (app/bench/variants); None is the original model."""

    def label(self) -> str:
        threads = f" threads={self.threads}" if self.threads else ""
        devices = f" devices={self.devices}" if self.devices > 1 else ""
        context = f" context={self.context}" if self.context else ""
        variant = f" variant={self.variant}" if self.variant else ""
        workload = workload_label(self.workload, self.task)
        return (
            f"{workload} {self.runtime} {self.device} {self.precision.value} batch={self.batch_size}"
            f"{context}{threads}{devices}{variant}"
        )


def stored_label(
    workload: str,
    task: str | None,
    runtime: str,
    device: str,
    precision: str,
    batch_size: int,
    *,
    threads: int | None = None,
    devices: int = 1,
    context: int | None = None,
    variant: str | None = None,
) -> str:
    """The label of the config a stored result measured (its columns as the database holds them), the
    same as that config's ``label()``: what a resumed job is told it need not measure again."""
    return BenchConfig(
        workload,
        Task(task) if task else None,
        runtime,
        device,
        Precision(precision),
        batch_size,
        threads,
        devices,
        context,
        variant,
    ).label()
