"""Eager PyTorch's host costs on a GPU, measured on the GPU reference runs: the dispatch per operator
(app/perfmodel/model.py, ``dispatch_eager_s``) and the autograd factor (``Params.autograd``).

The published results the model is fitted on (Lambda's NGC runs at large batches) keep their GPUs
busy: they hardly see the host. Fitted on them, the dispatch sat within 15% of its prior wherever it
was put (21 us with autocast's casts counted as Python calls, 24 us with them counted as the C++
launches they are). The reference runs see it: at batch 1 an eager inference step is the host's, one
dispatch per operator. So both are measured here, each the one number that makes the model, as
fitted, best match the runs (least squares in log throughput, over a grid):

- ``dispatch``: on the runs' batch-1 inference results, from 2 to 100 us;
- ``autograd``: then, with that dispatch, on their training results, from 0.5 to 8. An eager training
  step costs its host more per operator than an inference step: forward, each operator also records
  its node of the autograd graph and saves what the backward pass needs; backward, the engine runs
  each node from C++ through the dispatcher. On an H100 host (16 vCPUs of a Xeon under KVM) a
  ResNet-20 training step at batch 32 ran 249 kernels in 8.1 ms with the GPU 7% busy
  (benchmarks/train_breakdown.py), about 47 us per operator, where inference ran about 16.

``benchmarks/reference_check.py`` measures both from each run alone and checks them on the other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from app.contracts import Task
from app.perfmodel.model import Params
from app.perfmodel.references import Point, log_errors

DISPATCH_GRID = tuple(float(s) for s in np.exp(np.linspace(math.log(2e-6), math.log(1e-4), 81)))
AUTOGRAD_GRID = tuple(float(f) for f in np.exp(np.linspace(math.log(0.5), math.log(8.0), 61)))


def with_dispatch(params: Params, seconds: float) -> Params:
    """``params`` with eager PyTorch's dispatch per operator set to ``seconds``."""
    return replace(params, values={**params.values, "dispatch_eager_s": seconds})


def dispatch(found: Sequence[Point], params: Params) -> float | None:
    """The eager dispatch per operator that best fits the batch-1 inference points of ``found``."""
    steps = [p for p in found if p.config[1] is Task.infer and p.config[3] == 1]
    return _best(steps, DISPATCH_GRID, lambda seconds: with_dispatch(params, seconds))


def autograd(found: Sequence[Point], params: Params) -> float | None:
    """The autograd factor that best fits the training points of ``found``; None with none to fit."""
    steps = [p for p in found if p.config[1] is Task.train]
    return _best(steps, AUTOGRAD_GRID, lambda f: replace(params, autograd=f))


def measured(found: Sequence[Point], params: Params) -> Params:
    """``params`` with the dispatch, then the autograd factor, measured on ``found`` (each kept where
    ``found`` has no point to measure it)."""
    if (seconds := dispatch(found, params)) is not None:
        params = with_dispatch(params, seconds)
    if (factor := autograd(found, params)) is not None:
        params = replace(params, autograd=factor)
    return params


def _best(steps: Sequence[Point], grid: Sequence[float], made: Callable[[float], Params]) -> float | None:
    if not steps:
        return None

    def cost(value: float) -> float:
        return sum(e * e for e in log_errors(steps, made(value)))

    return min(grid, key=cost)
