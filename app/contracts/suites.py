"""Suites as data: measurement settings and the grid of configs (see app/bench/suites.py)."""

from __future__ import annotations

import tomllib
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.contracts.common import (
    ORIGINAL,
    Name,
    Precision,
    Task,
    VariantName,
)

SUITE_TOML_MAX = 64 * 1024
TOML_MAX_NESTING = 16
"""Arrays and inline tables nested deeper are refused before parsing: a suite needs three levels,
and Python's TOML parser recurses once per level (thousands of them were a RecursionError, a 500)."""


def toml_nesting(text: str) -> int:
    """The deepest nesting of brackets and braces in a TOML text, strings and comments aside (a
    table header ``[[grid]]`` counts two). One pass, no regular expression that could backtrack.
    A one-line string ends at its line at the latest, so a malformed one hides nothing beyond it."""
    depth = deepest = 0
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char == "#":
            newline = text.find("\n", i)
            i = end if newline < 0 else newline
        elif char in "\"'":
            i = _string_end(text, i)
        else:
            if char in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif char in "]}":
                depth = max(depth - 1, 0)
            i += 1
    return deepest


def _string_end(text: str, start: int) -> int:
    """Where the string opening at ``start`` ends: basic strings (\\" escapes a quote) and literal
    ones, one-line or multi-line (whose closing quotes may have one or two more before them)."""
    quote = text[start]
    closing = quote * 3 if text.startswith(quote * 3, start) else quote
    i, end = start + len(closing), len(text)
    while i < end:
        if quote == '"' and text[i] == "\\":
            i += 2
        elif text.startswith(closing, i):
            i += len(closing)
            if len(closing) == 3:  # '''a'''' is the string a', closed by its last three quotes
                for _ in range(2):
                    if i < end and text[i] == quote:
                        i += 1
            return i
        elif len(closing) == 1 and text[i] == "\n":
            return i
        else:
            i += 1
    return end


def check_toml_nesting(text: str) -> str:
    """The text, or ValueError when it nests deeper than TOML_MAX_NESTING."""
    nesting = toml_nesting(text)
    if nesting > TOML_MAX_NESTING:
        raise ValueError(f"the TOML is nested {nesting} levels deep; at most {TOML_MAX_NESTING} are read")
    return text


def load_toml(text: str) -> dict[str, Any]:
    """tomllib.loads with the nesting bound first; ValueError (TOMLDecodeError is one) for anything wrong."""
    try:
        return tomllib.loads(check_toml_nesting(text))
    except RecursionError:  # not expected past the bound; a ValueError all the same if it comes
        raise ValueError(f"the TOML is nested too deep; at most {TOML_MAX_NESTING} levels are read") from None


SuiteToml = Annotated[str, Field(max_length=SUITE_TOML_MAX), AfterValidator(check_toml_nesting)]
"""A suite file's text on the wire; its nesting is bounded here, its content checked by SuiteSpec."""

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
    warmup_min_s: float | None = Field(
        default=None,
        ge=0,
        le=3600,
        description="Warm up at least this long, steady or not; none: the device's own (1 s on a GPU, 0 on a CPU).",
    )
    sampling_min_s: float | None = Field(
        default=None,
        ge=0,
        le=3600,
        description="Sample at least this long before the stopping rule may end it (an energy counter needs the "
        "time); none: the device's own (1 s on a GPU, 0 on a CPU).",
    )


class GridSpec(BaseModel):
    """One row of a suite: it stands for every combination of its lists (see app/bench/suites.py)."""

    model_config = ConfigDict(extra="forbid")

    workloads: list[Name] = Field(min_length=1, max_length=GRID_LIST_MAX)
    tasks: list[Task] = Field(default=[Task.infer], max_length=GRID_LIST_MAX)
    runtimes: list[Name] = Field(default=["torch-eager"], max_length=GRID_LIST_MAX)
    devices: list[Annotated[str, Field(pattern=r"^(cpu|cuda(:[0-9]{1,2})?)$")]] = Field(
        default=["cpu"], max_length=GRID_LIST_MAX
    )
    precisions: list[Precision] = Field(default=[Precision.fp32], max_length=GRID_LIST_MAX)
    batch_sizes: list[Annotated[int, Field(ge=1, le=1_000_000)]] = Field(default=[1], max_length=GRID_LIST_MAX)
    threads: list[ThreadSpec] = Field(default=["all"], max_length=GRID_LIST_MAX)
    variants: list[VariantName] = Field(
        default=[ORIGINAL],
        max_length=GRID_LIST_MAX,
        description="Model variants to measure (int8-static, pruned-50, lowrank-25); 'none' is the original model.",
    )
    device_counts: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        default=[1],
        max_length=GRID_LIST_MAX,
        description="Devices per config: 2 or more is data-parallel training (task train) or a collective.",
    )
    contexts: list[Annotated[int, Field(ge=1, le=1_048_576)]] = Field(
        default=[],
        max_length=GRID_LIST_MAX,
        description="Language models: prompt lengths (prefill), KV-cache lengths (decode), sequence lengths "
        "(train); empty: each workload's own. Other workloads ignore them.",
    )


class SuiteSpec(BaseModel):
    """A suite file (TOML) as data: a name, measurement settings and grids."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    description: str = ""
    measure: MeasureSpec = MeasureSpec()
    grid: list[GridSpec] = Field(min_length=1, max_length=200)
