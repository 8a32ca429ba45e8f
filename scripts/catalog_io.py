"""Reading the datasets and curated tables, and an entry that names the source of each figure."""

from __future__ import annotations

import csv
import re
import tomllib
from pathlib import Path
from typing import Any

PEAK_FIELDS = {
    "fp32": "peak_fp32_tflops",
    "tf32": "peak_tf32_tflops",
    "bf16": "peak_bf16_tflops",
    "fp16": "peak_fp16_tflops",
    "fp16_acc16": "peak_fp16_acc16_tflops",
    "fp8": "peak_fp8_tflops",
    "int8": "peak_int8_tops",
}
"""A rule's precision -> the catalog field its derived peak goes in (TFLOP/s; int8: TOP/s)."""


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in csv.DictReader(handle)]


def toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def number(value: str | None) -> float | None:
    """The first number in a cell ('Up to 3.7 GHz' -> 3.7, '$1,234.00' -> 1234.0); None for none."""
    if value is None:
        return None
    found = re.search(r"[-+]?\d+(\.\d+)?", value.replace(",", ""))
    return float(found.group()) if found else None


def rounded(value: float) -> float:
    return round(value, 3)


class Sourced:
    """An entry being built: its fields and, per figure, where the figure came from."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.data["sources"] = {}

    def put(self, field: str, value: float | None, source: str, *, override: bool = False) -> None:
        """Set a figure unless it is unknown or (without ``override``) already set from a better source."""
        if value is None or (self.data.get(field) is not None and not override):
            return
        self.data[field] = rounded(value)
        self.data["sources"][field] = source
