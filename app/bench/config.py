"""A config: one point of a suite's grid (workload x task x runtime x device x precision x batch x threads)."""

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
    precision: Precision
    batch_size: int
    threads: int | None = None

    def label(self) -> str:
        threads = f" threads={self.threads}" if self.threads else ""
        workload = workload_label(self.workload, self.task)
        return f"{workload} {self.runtime} {self.device} {self.precision.value} batch={self.batch_size}{threads}"
