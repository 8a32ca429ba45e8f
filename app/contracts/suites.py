"""Suites as data: measurement settings and the grid of configs (see app/bench/suites.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.contracts.common import (
    Name,
    Precision,
    Task,
)

ThreadSpec = Annotated[int, Field(ge=1, le=4096)] | Literal["all", "scaling"]
GRID_LIST_MAX = 64
"""Entries in each list of a grid row: a row stands for their product, so each list is bounded."""


class MeasureSpec(BaseModel):
    """How the harness measures (app/bench/measure.py): a suite's ``[measure]`` table and the
    harness's settings are this one model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target_ci: float = Field(default=0.02, gt=0, lt=1, description="Stop when the median's 95% CI is this close.")
    time_budget_s: float = Field(default=3.0, gt=0, le=3600, description="Wall-clock budget for sampling.")
    max_iterations: int = Field(default=10_000, ge=1, le=10_000_000)
    min_iterations: int = Field(default=10, ge=1, le=10_000)
    warmup_budget_s: float = Field(default=3.0, ge=0, le=3600, description="Warm-up has its own budget.")
    warmup_min: int = Field(default=2, ge=0, le=10_000)
    warmup_window: int = Field(default=5, ge=1, le=1000)
    warmup_tolerance: float = Field(
        default=0.05, gt=0, lt=1, description="Warm-up ends when the last two windows' medians differ by less."
    )
    fixed_iterations: int | None = Field(
        default=None, ge=1, le=10_000_000, description="Exactly this many timed iterations, whatever the statistics."
    )


class GridSpec(BaseModel):
    """One row of a suite: it stands for every combination of its lists (see app/bench/suites.py)."""

    model_config = ConfigDict(extra="forbid")

    workloads: list[Name] = Field(min_length=1, max_length=GRID_LIST_MAX)
    tasks: list[Task] = Field(default=[Task.infer], max_length=GRID_LIST_MAX)
    runtimes: list[Name] = Field(default=["torch-eager"], max_length=GRID_LIST_MAX)
    devices: list[Annotated[str, Field(pattern=r"^(cpu|cuda(:\d{1,2})?)$")]] = Field(
        default=["cpu"], max_length=GRID_LIST_MAX
    )
    precisions: list[Precision] = Field(default=[Precision.fp32], max_length=GRID_LIST_MAX)
    batch_sizes: list[Annotated[int, Field(ge=1, le=1_000_000)]] = Field(default=[1], max_length=GRID_LIST_MAX)
    threads: list[ThreadSpec] = Field(default=["all"], max_length=GRID_LIST_MAX)


class SuiteSpec(BaseModel):
    """A suite file (TOML) as data: a name, measurement settings and grids."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    description: str = ""
    measure: MeasureSpec = MeasureSpec()
    grid: list[GridSpec] = Field(min_length=1, max_length=200)
