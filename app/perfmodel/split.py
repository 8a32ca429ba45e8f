"""The *split correction* (a word this project adds): a device's measured / modelled ratios read as two
factors, one on the model's host time and one on its device time, so that a ratio measured at one step
can be carried to another part's step of another mix.

A lab correction says how far the model is from what a device measured (app/recommender/estimators/
modelled.py). Where the device that measured is the part asked about, its ratio at the batch is right as
it is (``references.at_batch``). Carried to another part at the same batch, it is not always: the batch
can be host-bound on the device that measured it and device-bound on the part asked about, and the
model errs differently on the two. On the H100 reference run MobileNet-v2 training at batch 32 measured
what the model said (the host's time, right) and at 256 two thirds of it (the device's time, short by
half); an L40S or an A10 is device-bound from batch 32, so batch 32's ratio made them up to 1.45x faster at
batch 32 than at 256. So each device's measurements of a runtime and precision fit a factor on the host's
time and one on the device's (``fit``: least squares in log time, the step combined as the model
combines it, ``model.combined``, with a weak tie between the two, ``TIE``, which holds them together
where one regime alone was measured), and a ratio carried to another part moves by what the two factors
say of the difference between the two steps (``Split.moved``): nothing where the steps mix host and
device time alike, so a transfer between parts of one kind is what it was (benchmarks/reference_check.py:
the transfer column unchanged, ``gpu-transfer`` 0.302 either way), and the device factor's pull where
the step asked about is the device's and the one measured the host's. benchmarks/pairs_sweep.py: over 15
GPUs, every zoo workload, batches 1, 32 and 256, 41 figures fell by more than 10% from batch 32 to 256
because their calibration did; none since.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from app.perfmodel.model import combined

TIE = 0.01
"""Weight of the prior (log host factor - log device factor)^2 beside the points' squared log errors: small,
so measurements of both regimes set both factors, and enough to hold them together where one alone was
measured."""
ITERATIONS = 30
STEP = 1e-4
"""The finite difference, in log time, of the combined step's derivatives."""


class Timed(NamedTuple):
    """One measured step: the model's host and device seconds for it and the seconds it measured."""

    host_s: float
    device_s: float
    measured_s: float


class Split(NamedTuple):
    """Log factors on the model's host time and device time."""

    host: float
    device: float
    kind: str

    def ratio(self, host_s: float, device_s: float) -> float:
        """log(measured / modelled throughput) for a step the model puts at ``host_s`` and ``device_s``."""
        modelled = combined(host_s, device_s, self.kind)
        return math.log(modelled / combined(host_s * math.exp(self.host), device_s * math.exp(self.device), self.kind))

    def moved(self, measured: tuple[float, float], asked: tuple[float, float]) -> float:
        """How much the log ratio measured at a step of (host, device) seconds ``measured`` moves for a
        step ``asked``: nothing where the two mix host and device time alike, the device factor's pull
        where the asked step is the device's and the measured one the host's."""
        return self.ratio(*asked) - self.ratio(*measured)


def fit(timed: Sequence[Timed], kind: str) -> Split:
    """The two log factors that best match ``timed`` (Gauss-Newton, damped, from their mean log ratio)."""
    host = np.array([t.host_s for t in timed])
    device = np.array([t.device_s for t in timed])
    target = np.log(np.array([t.measured_s for t in timed]))
    start = float(np.mean(target - np.log(combined(host, device, kind))))
    a = b = start
    tie = math.sqrt(TIE)
    damping = 1e-3
    for _ in range(ITERATIONS):
        base = np.log(combined(host * math.exp(a), device * math.exp(b), kind))
        residual = np.append(base - target, tie * (a - b))
        da = (np.log(combined(host * math.exp(a + STEP), device * math.exp(b), kind)) - base) / STEP
        db = (np.log(combined(host * math.exp(a), device * math.exp(b + STEP), kind)) - base) / STEP
        jacobian = np.column_stack([np.append(da, tie), np.append(db, -tie)])
        normal = jacobian.T @ jacobian + damping * np.eye(2)
        move = np.linalg.solve(normal, -jacobian.T @ residual)
        a, b = a + float(move[0]), b + float(move[1])
        if abs(move[0]) + abs(move[1]) < 1e-6:
            break
    return Split(a, b, kind)
