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


class MeasureSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time_budget_s: float = Field(default=3.0, gt=0, le=3600)
    warmup_budget_s: float = Field(default=3.0, gt=0, le=3600)
    target_ci: float = Field(default=0.02, gt=0, lt=1)
    max_iterations: int = Field(default=10_000, ge=1)


class GridSpec(BaseModel):
    """One row of a suite: it stands for every combination of its lists (see app/bench/suites.py)."""

    model_config = ConfigDict(extra="forbid")

    workloads: list[Name] = Field(min_length=1)
    tasks: list[Task] = [Task.infer]
    runtimes: list[Name] = ["torch-eager"]
    devices: list[Annotated[str, Field(pattern=r"^(cpu|cuda(:\d{1,2})?)$")]] = ["cpu"]
    precisions: list[Precision] = [Precision.fp32]
    batch_sizes: list[Annotated[int, Field(ge=1, le=1_000_000)]] = [1]
    threads: list[ThreadSpec] = ["all"]


class SuiteSpec(BaseModel):
    """A suite file (TOML) as data: a name, measurement settings and grids."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    description: str = ""
    measure: MeasureSpec = MeasureSpec()
    grid: list[GridSpec] = Field(min_length=1, max_length=200)
