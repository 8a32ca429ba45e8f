"""How many threads MKL runs an fp32 product of few rows on, on an AMD CPU, when it may use N.

PyTorch's x86 wheels hand an fp32 linear layer to MKL. On AMD CPUs a one-row product is SGEMV, which
runs on one thread however many are allowed (pytorch/pytorch#96643). A product of more rows is SGEMM,
which lays the threads it may use out as a grid: the output's columns split over C of them, the rows
in blocks of ``ROW_BLOCK`` over G groups of those (C x G <= N). A product of few rows fills few groups:
2-4 rows take one group's C threads, 5-8 two groups', and so on, so a decode of few sequences uses a
fraction of a many-core part's threads (96 allowed: 12 threads at 2-4 rows, 24 at 5-8, all 96 at 32).
C and G per N are measured, not derived (``benchmarks/linear_rows.py --split``, which counts the threads
that did a share of the work under ``OMP_WAIT_POLICY=PASSIVE``, so it needs no more cores than one):
the shipped grid is app/perfmodel/data/mkl_split.json. Where it applies: a language model's step,
app/perfmodel/generation.py's ``product_threads`` and ``weight_threads`` (each group of rows takes the
whole weight matrix, so its work on the weights is shared by the C threads alone); a zoo workload's
step, per bucket of its linear layers, app/perfmodel/model.py's ``few_row_shares``.
"""

from __future__ import annotations

import bisect
import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

ROW_BLOCK = 4
"""The rows a group's threads take at least, and in multiples of: 4 rows over 2 groups are one group's,
5 rows two groups'; 17 rows over 3 groups, 8 rows each, three groups'."""

PATH = Path(str(resources.files("app.perfmodel").joinpath("data/mkl_split.json")))


class MklSplit(BaseModel):
    """MKL's grid of threads per thread count allowed, as ``benchmarks/linear_rows.py --split`` measured it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="What measured it: the script, the CPU, torch's version, the date.")
    threads: list[int] = Field(description="The thread counts allowed, ascending, from 1.")
    columns: list[int] = Field(description="At each count, the threads the output's columns were split over.")
    row_groups: list[int] = Field(description="At each count, the groups the rows' blocks were split over.")

    @model_validator(mode="after")
    def _a_grid_per_count(self) -> MklSplit:
        if not (len(self.threads) == len(self.columns) == len(self.row_groups)) or not self.threads:
            raise ValueError("mkl_split: one column count and one row-group count per thread count")
        if self.threads[0] != 1 or any(b <= a for a, b in zip(self.threads, self.threads[1:], strict=False)):
            raise ValueError("mkl_split: thread counts must ascend from 1")
        for n, c, g in zip(self.threads, self.columns, self.row_groups, strict=True):
            if c < 1 or g < 1 or c * g > n:
                raise ValueError(f"mkl_split: at {n} threads a grid of {c} x {g} does not fit")
        return self

    def grid(self, threads: int) -> tuple[int, int]:
        """(columns, row groups) at ``threads``: the measured count's, else the next lower one's."""
        i = bisect.bisect_right(self.threads, max(1, threads)) - 1
        return self.columns[i], self.row_groups[i]


@lru_cache(maxsize=1)
def shipped() -> MklSplit:
    return MklSplit.model_validate(json.loads(PATH.read_text(encoding="utf-8")))


def threads_of(rows: int, columns: int, row_groups: int) -> int:
    """The threads that get a share of a product of ``rows`` rows on a grid of ``columns`` x ``row_groups``:
    each working group takes ``ROW_BLOCK``-multiple rows, as evenly as that allows; one row is SGEMV's one."""
    if rows <= 1:
        return 1
    chunk = ROW_BLOCK * math.ceil(math.ceil(rows / row_groups) / ROW_BLOCK)
    return columns * min(row_groups, math.ceil(rows / chunk))


@lru_cache(maxsize=65536)
def product_threads(rows: int, threads: int) -> int:
    """The threads MKL runs an fp32 product of ``rows`` rows on, on an AMD CPU, allowed ``threads``."""
    return min(threads, threads_of(rows, *shipped().grid(threads)))


@lru_cache(maxsize=65536)
def column_threads(rows: int, threads: int) -> int:
    """The threads of a product of ``rows`` rows, allowed ``threads``, that split its output's columns, and so
    its weights, between them: each group of rows on the grid has its own ``columns`` threads, which take
    the whole weight matrix again (the grid's C at ``threads``); one row's SGEMV has one thread."""
    if rows <= 1:
        return 1
    columns, _groups = shipped().grid(threads)
    return min(threads, columns)
