"""A device's measured / modelled ratio at the batch asked for (app/perfmodel/references.py,
at_batch): the model's error moves with the batch, from host-bound to compute-bound, so a ratio is
read where it was measured and drawn between measured batches, never carried past them."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.perfmodel.references import at_batch

POINTS = [(1, 0.2), (256, -0.4), (256, -0.2)]


def test_a_measured_batch_gives_the_mean_of_its_own_ratios() -> None:
    assert at_batch(POINTS, 1) == pytest.approx(0.2)
    assert at_batch(POINTS, 256) == pytest.approx(-0.3)


def test_between_two_measured_batches_the_ratio_follows_the_line_in_log_batch() -> None:
    assert at_batch(POINTS, 16) == pytest.approx(0.2 + 0.5 * (-0.3 - 0.2))


def test_beyond_the_measured_batches_the_nearest_ones_ratio_stands() -> None:
    assert at_batch([(32, 0.1), (256, 0.3)], 8) == pytest.approx(0.1)
    assert at_batch([(32, 0.1), (256, 0.3)], 1024) == pytest.approx(0.3)


def test_no_batch_asked_gives_the_mean_of_all() -> None:
    assert at_batch(POINTS, None) == pytest.approx(sum(r for _, r in POINTS) / 3)


@given(
    st.lists(st.tuples(st.integers(1, 4096), st.floats(-2, 2)), min_size=1, max_size=8),
    st.integers(1, 4096),
)
def test_the_ratio_at_any_batch_lies_within_the_measured_ones(points: list[tuple[int, float]], batch: int) -> None:
    found = at_batch(points, batch)
    by: dict[int, list[float]] = {}
    for b, r in points:
        by.setdefault(b, []).append(r)
    means = [sum(rs) / len(rs) for rs in by.values()]
    assert min(means) - 1e-9 <= found <= max(means) + 1e-9
    assert math.isfinite(found)
