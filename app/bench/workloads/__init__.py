"""The model zoo: one module per workload, each registering itself (see base.py)."""

from __future__ import annotations

from app.bench.workloads.base import Size, Workload, WorkloadInfo, count_parameters, workloads

__all__ = ["Size", "Workload", "WorkloadInfo", "count_parameters", "get_workload", "workloads"]


def get_workload(name: str) -> Workload:
    """An instance of the named workload ('resnet50'; a task suffix '/infer' is accepted and ignored)."""
    return workloads.get(name.split("/", 1)[0])()
