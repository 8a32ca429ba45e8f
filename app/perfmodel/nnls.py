"""Non-negative least squares for the few columns the project's fits have, solved exactly."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


def nnls(a: Array, b: Array) -> Array:
    """min ||a x - b|| with x >= 0, by trying every set of free columns (a handful: 2^k - 1 solves)."""
    best, best_residual = np.zeros(a.shape[1]), float(np.sum(b * b))
    for size in range(1, a.shape[1] + 1):
        for free in itertools.combinations(range(a.shape[1]), size):
            solution, *_ = np.linalg.lstsq(a[:, free], b, rcond=None)
            if np.any(solution < 0):
                continue
            x = np.zeros(a.shape[1])
            x[list(free)] = solution
            residual = float(np.sum((a @ x - b) ** 2))
            if residual < best_residual:
                best, best_residual = x, residual
    return best
