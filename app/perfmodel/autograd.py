"""The autograd factor (app/perfmodel/model.py, ``Params.autograd``), measured on the GPU reference runs.

An eager PyTorch training step costs its host more per operator than an inference step: forward, each
operator also records its node of the autograd graph and saves what the backward pass needs; backward,
the engine runs each node from C++ through the dispatcher. The published training results (Lambda's
NGC runs at large batches) keep their GPUs busy and cannot see it, so the factor is not fitted with the
rest: it is the one number that makes the model, as fitted, best match the reference runs' training
results (least squares in log throughput, over a grid from 0.5 to 8). On an H100 host (16 vCPUs of a
Xeon under KVM) a ResNet-20 training step at batch 32 ran 249 kernels in 8.1 ms with the GPU 7% busy
(benchmarks/train_breakdown.py), about 47 us per operator, where inference ran about 16.
``benchmarks/reference_check.py`` measures it from each run alone and checks it on the other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from app.contracts import Task
from app.perfmodel.model import Params
from app.perfmodel.references import Point, log_errors

GRID = tuple(float(f) for f in np.exp(np.linspace(math.log(0.5), math.log(8.0), 61)))


def measure(found: Sequence[Point], params: Params) -> float | None:
    """The factor that best fits the training points of ``found``; None with none to fit."""
    training = [p for p in found if p.config[1] is Task.train]
    if not training:
        return None

    def cost(factor: float) -> float:
        return sum(e * e for e in log_errors(training, replace(params, autograd=factor)))

    return min(GRID, key=cost)
