"""Where the bench keeps what it can remake (ONNX exports, workload profiles): ``HWADVISOR_CACHE_DIR``,
default ``$XDG_CACHE_HOME/hwadvisor``. The bench reads no server setting."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    configured = os.environ.get("HWADVISOR_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hwadvisor"
