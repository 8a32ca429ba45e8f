"""Non-negative least squares: the optimum, with no value below zero, for the few columns the fits have."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.perfmodel.nnls import nnls


def test_a_negative_least_squares_value_is_held_at_zero_and_the_rest_refitted() -> None:
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert nnls(a, np.array([1.0, 2.0, 3.0])) == pytest.approx([1.0, 2.0])
    assert nnls(a, np.array([-1.0, 2.0, 1.0])) == pytest.approx([0.0, 1.5])
    assert nnls(a, -np.ones(3)) == pytest.approx([0.0, 0.0])


def test_of_two_columns_no_row_tells_apart_either_may_carry_the_fit() -> None:
    a = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    x = nnls(a, np.array([2.0, 4.0, 6.0]))
    assert (x >= 0).all()
    assert a @ x == pytest.approx([2.0, 4.0, 6.0])


def _every_free_set(a: np.ndarray, b: np.ndarray) -> float:
    """The least residual over every set of free columns whose least squares values are all >= 0."""
    best = float(b @ b)
    for size in range(1, a.shape[1] + 1):
        for free in itertools.combinations(range(a.shape[1]), size):
            values = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
            if (values >= 0).all():
                best = min(best, float(np.sum((a[:, free] @ values - b) ** 2)))
    return best


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(6, 60),
    columns=st.integers(1, 5),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_it_reaches_the_least_residual_any_non_negative_solution_has(
    seed: int, rows: int, columns: int, scale: float
) -> None:
    rng = np.random.default_rng(seed)
    # columns many orders of magnitude apart, as seconds per FLOP beside seconds per byte
    a = rng.normal(size=(rows, columns)) * 10.0 ** rng.uniform(-15, 0, size=columns)
    b = rng.normal(size=rows) * scale
    x = nnls(a, b)
    assert (x >= 0).all()
    residual = float(np.sum((a @ x - b) ** 2))
    assert residual <= _every_free_set(a, b) * (1 + 1e-9) + 1e-12 * scale**2


def test_an_exact_fit_on_tiny_columns_is_found_exactly() -> None:
    a = np.array([[1e-15, 3e-12], [2e-15, 1e-12], [4e-15, 5e-12]])
    x = nnls(a, a @ np.array([2e14, 0.0]))
    assert x == pytest.approx([2e14, 0.0], rel=1e-9)


def test_a_column_that_is_the_sum_of_two_others_fits_alone_and_leaves_them_at_zero() -> None:
    a = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    x = nnls(a, np.array([1.0, 1.0, 0.0]))
    assert x == pytest.approx([0.0, 0.0, 1.0])
