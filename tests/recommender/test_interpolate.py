from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.recommender.interpolate import interpolate, non_decreasing


def test_a_point_between_two_batches_lies_on_the_line_in_log_batch() -> None:
    at = interpolate([(8, 2000.0), (64, 4500.0), (1, 400.0)], 16)
    assert at is not None
    assert at.value == pytest.approx(2000 + (4 - 3) / (6 - 3) * 2500)
    assert (at.low_x, at.high_x) == (8, 64)


def test_nothing_outside_the_measured_range_or_from_one_point() -> None:
    assert interpolate([(8, 2000.0), (64, 4500.0)], 128) is None
    assert interpolate([(8, 2000.0), (64, 4500.0)], 4) is None
    assert interpolate([(8, 2000.0)], 8) is None


def test_a_dip_between_batches_is_treated_as_noise() -> None:
    assert non_decreasing([1.0, 3.0, 2.0, 4.0]) == [1.0, 2.5, 2.5, 4.0]
    at = interpolate([(1, 1.0), (2, 3.0), (4, 2.0), (8, 4.0)], 4)
    assert at is not None and at.value == pytest.approx(2.5)


@given(st.lists(st.floats(min_value=0.1, max_value=1e6), min_size=1, max_size=30))
def test_the_fit_is_non_decreasing_and_keeps_the_mean(values: list[float]) -> None:
    fitted = non_decreasing(values)
    assert all(a <= b * (1 + 1e-9) for a, b in itertools.pairwise(fitted))
    assert math.isclose(sum(fitted), sum(values), rel_tol=1e-9)
