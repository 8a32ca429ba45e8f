"""MKL's grid of threads for an fp32 product of few rows on an AMD CPU (app/perfmodel/mkl_split.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.perfmodel import mkl_split
from app.perfmodel.mkl_split import MklSplit, threads_of


@pytest.mark.parametrize(
    ("columns", "groups", "counted"),
    [
        # benchmarks/linear_rows.py --split on a Zen 4 VM: the threads that did a share of 1, 3, 5, 9, 17
        # and 33 rows, allowed 96, 64 and 2
        (12, 8, {1: 1, 3: 12, 5: 24, 9: 36, 17: 60, 33: 60}),
        (9, 7, {1: 1, 3: 9, 5: 18, 9: 27, 17: 45, 33: 45}),
        (1, 2, {1: 1, 2: 1, 3: 1, 4: 1, 5: 2, 64: 2}),
    ],
)
def test_a_grid_gives_each_working_group_whole_blocks_of_four_rows(
    columns: int, groups: int, counted: dict[int, int]
) -> None:
    for rows, threads in counted.items():
        assert threads_of(rows, columns, groups) == threads, rows


def test_the_shipped_grid_fits_its_threads_and_says_what_the_lab_vms_showed() -> None:
    found = mkl_split.shipped()
    for n in range(1, 300):
        columns, groups = found.grid(n)
        assert columns * groups <= n
        for rows in (1, 2, 4, 5, 8, 64, 4096):
            assert 1 <= mkl_split.product_threads(rows, n) <= n
    # two threads: a product of up to 4 rows on one, 5 or more on both (a batch-4 decode gained
    # 0.96-1.13x from a second thread on three AMD VMs, benchmarks/llm_cpu_threads.toml)
    assert [mkl_split.product_threads(rows, 2) for rows in (1, 2, 3, 4, 5, 6)] == [1, 1, 1, 1, 2, 2]
    assert mkl_split.product_threads(4096, 96) == 96  # a prefill's rows fill the grid
    assert mkl_split.product_threads(1, 192) == 1  # SGEMV


def test_a_count_between_two_measured_ones_takes_the_lower_ones_grid() -> None:
    split = MklSplit(source="test", threads=[1, 2, 8], columns=[1, 1, 4], row_groups=[1, 2, 2])
    assert split.grid(7) == (1, 2)
    assert split.grid(8) == split.grid(500) == (4, 2)


@pytest.mark.parametrize(
    ("threads", "columns", "groups"),
    [([1, 2], [1, 2], [1, 2]), ([2, 4], [1, 1], [1, 1]), ([1, 4, 4], [1, 1, 1], [1, 1, 1]), ([1, 2], [1], [1, 1])],
)
def test_a_grid_that_cannot_be_is_refused(threads: list[int], columns: list[int], groups: list[int]) -> None:
    with pytest.raises(ValidationError):
        MklSplit(source="test", threads=threads, columns=columns, row_groups=groups)
