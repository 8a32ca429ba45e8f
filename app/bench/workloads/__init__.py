"""The model zoo. Importing this package registers every workload."""

from __future__ import annotations

from app.bench.workloads import bert, cnn, mlp, rnn  # noqa: F401  (registers the workloads)
from app.bench.workloads.base import Size, Workload, count_parameters, workloads

__all__ = ["Size", "Workload", "count_parameters", "get_workload", "workloads"]


def get_workload(name: str) -> Workload:
    """An instance of the named workload ('resnet50'; a task suffix '/infer' is accepted and ignored)."""
    return workloads.get(name.split("/", 1)[0])()
