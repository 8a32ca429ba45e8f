"""A config: one point of a suite's grid (workload x task x runtime x device x precision x batch x threads)."""

from __future__ import annotations

from dataclasses import dataclass

from app.contracts import Precision, Task


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

    @property
    def workload_name(self) -> str:
        """The result's workload: 'resnet50/infer'; primitives carry no task ('gemm_2048')."""
        return self.workload if self.task is None else f"{self.workload}/{self.task.value}"

    def label(self) -> str:
        threads = f" threads={self.threads}" if self.threads else ""
        return (
            f"{self.workload_name} {self.runtime} {self.device} {self.precision.value} batch={self.batch_size}{threads}"
        )
