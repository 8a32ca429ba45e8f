"""Runtimes: how a workload runs, one module each (see base.py)."""

from __future__ import annotations

from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes

__all__ = ["Prepared", "Runtime", "RuntimeInfo", "runtimes"]
