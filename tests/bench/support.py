"""What the runtime tests share: the machine they run on (probed once) and the tiny measurement."""

from __future__ import annotations

import functools

from app.contracts import MachineSpec, MeasureSpec
from app.probes import probe_machine

TINY = MeasureSpec(fixed_iterations=2, warmup_min=1, warmup_budget_s=0.0)
"""Two timed steps after one warm-up: enough to show a config runs, not to time it."""


@functools.cache
def machine() -> MachineSpec:
    return probe_machine()
