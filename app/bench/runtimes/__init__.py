"""Runtimes: how a workload runs. Importing this package registers every runtime."""

from __future__ import annotations

from app.bench.runtimes import onnx_runtime, torch_runtime  # noqa: F401  (registers the runtimes)
from app.bench.runtimes.base import Prepared, Runtime, runtimes

__all__ = ["Prepared", "Runtime", "runtimes"]
