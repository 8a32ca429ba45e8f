"""Non-negative least squares for the few columns the project's fits have.

Lawson and Hanson's active-set method run on the normal equations: the fits here have many rows and
two to six columns, so ``a.T @ a`` and ``a.T @ b`` are formed once and every step after is a solve of
at most columns x columns, done in plain Python, where numpy's cost per call would be most of the time.
The power fit (app/perfmodel/power_fit.py) calls this some 300,000 times.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]

ITERATIONS = 100
"""Outer steps at most (each frees one column): far more than the columns any caller has."""
TOLERANCE = 1e-12
"""A column whose correlation with the residual is below this share of ``|b|`` (per column) is not
freed: the residual is as small as rounding lets it be."""
SINGULAR = 1e-12
"""A pivot this small against the largest diagonal value of the block: its columns are dependent."""


def nnls(a: Array, b: Array) -> Array:
    """min ||a x - b|| with x >= 0."""
    # each column scaled to unit length (x >= 0 is kept by a positive scale): the callers' columns
    # differ by many orders of magnitude (seconds per FLOP beside seconds per byte), which the normal
    # equations would square; an all-zero column stays at 0
    norms = np.sqrt(np.einsum("ij,ij->j", a, a))
    scale = np.where(norms > 0.0, norms, 1.0)
    unit = a / scale
    gram: list[list[float]] = (unit.T @ unit).tolist()
    target: list[float] = (unit.T @ b).tolist()
    columns = len(target)
    x = [0.0] * columns
    free = [False] * columns
    tolerance = TOLERANCE * max(1, columns) * float(np.sqrt(b @ b))
    gradient = list(target)
    for _ in range(ITERATIONS):
        candidates = [(g, j) for j, g in enumerate(gradient) if not free[j]]
        steepest, chosen = max(candidates, default=(0.0, -1))
        if steepest <= tolerance:
            break
        free[chosen] = True
        while True:
            at = [j for j in range(columns) if free[j]]
            z = _solve(gram, target, at)
            if all(z[j] > 0.0 for j in at):
                x = z
                break
            # step from x toward z until the first free value reaches zero, and fix that one there
            alpha, first = min((x[j] / (x[j] - z[j]) if x[j] > z[j] else 0.0, j) for j in at if z[j] <= 0.0)
            x = [xj + alpha * (zj - xj) for xj, zj in zip(x, z, strict=True)]
            for j in at:
                if j == first or x[j] <= 0.0:
                    free[j] = False
                    x[j] = 0.0
            if not any(free):
                break
        gradient = [t - sum(g * v for g, v in zip(row, x, strict=True)) for t, row in zip(target, gram, strict=True)]
    return np.array(x) / scale


def _solve(gram: list[list[float]], target: list[float], at: list[int]) -> list[float]:
    """The unconstrained least-squares values of the free columns ``at`` (the others 0), by Gaussian
    elimination of their block of the normal equations; numpy's minimum-norm solution where those
    columns are dependent (two host terms that no row tells apart)."""
    block = [[gram[i][j] for j in at] + [target[i]] for i in at]
    z = [0.0] * len(target)
    for j, v in zip(at, _eliminated(block) or _dependent(block), strict=True):
        z[j] = v
    return z


def _eliminated(block: list[list[float]]) -> list[float] | None:
    """The solution of the augmented system ``block`` (n rows of n values and the right-hand side) by
    Gaussian elimination with partial pivoting; None where a pivot is too small to trust. ``block`` is
    left as it was (rows are swapped and replaced in a copy of the list, never changed in place)."""
    block = list(block)
    n = len(block)
    scale = max(abs(block[i][i]) for i in range(n)) or 1.0
    for k in range(n):
        pivot = max(range(k, n), key=lambda r: abs(block[r][k]))
        if abs(block[pivot][k]) <= SINGULAR * scale:
            return None
        block[k], block[pivot] = block[pivot], block[k]
        for r in range(k + 1, n):
            ratio = block[r][k] / block[k][k]
            if ratio:
                block[r] = [v - ratio * w for v, w in zip(block[r], block[k], strict=True)]
    values = [0.0] * n
    for k in reversed(range(n)):
        values[k] = (block[k][n] - sum(block[k][j] * values[j] for j in range(k + 1, n))) / block[k][k]
    return values


def _dependent(block: list[list[float]]) -> list[float]:
    """numpy's minimum-norm least-squares solution of the augmented system ``block``."""
    matrix = np.array(block)
    values: list[float] = np.linalg.lstsq(matrix[:, :-1], matrix[:, -1], rcond=None)[0].tolist()
    return values
