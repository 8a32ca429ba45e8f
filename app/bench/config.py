"""A config: one point of a suite's grid (workload x task x runtime x device x precision x batch x threads)."""

from __future__ import annotations

from dataclasses import dataclass

from app.contracts import Precision, Task, workload_label


@dataclass(frozen=True, slots=True)
class BenchConfig:
    workload: str
    task: Task
    runtime: str
    device: str
    precision: Precision
    batch_size: int
    threads: int | None = None

    @property
    def result_task(self) -> Task | None:
        """The result's task; primitives (gemm_2048) carry none."""
        from app.bench.primitives import primitives

        return None if self.workload in primitives else self.task

    def label(self) -> str:
        threads = f" threads={self.threads}" if self.threads else ""
        workload = workload_label(self.workload, self.result_task)
        return f"{workload} {self.runtime} {self.device} {self.precision.value} batch={self.batch_size}{threads}"
