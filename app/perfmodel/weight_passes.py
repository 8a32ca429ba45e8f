"""How many times a CPU's product of few rows reads its weights: its **weight passes**.

PyTorch's fp32 linear layer on an x86 CPU is MKL's SGEMM, and which kernel runs it depends on the
rows it multiplies (one per sequence in a decode, one per prompt token in a prefill) and on the code
MKL takes on the CPU (its **BLAS path**, ``path_of``). Its kernel for few rows streams the weights once
per block of rows; from some count on it packs the weights once per call (a read and a write) and runs
the rows from the packed copy at the compute rate. So a decode's weight part is not read once per step
but a number of times that grows in steps with the batch: on this project's Intel VM (AVX-512, session
59) a product of 1-3 rows took one row's time, 4-6 rows twice it, 7-9 three times, 13-15 five times,
and from 16 rows 2.3x one row's time plus the compute (``benchmarks/linear_rows.py --passes``, the same at
two threads; docs/ACCURACY.md). The shipped passes per path are app/perfmodel/data/weight_passes.json,
written by ``benchmarks/linear_rows.py --passes --write``; app/perfmodel/generation.py scales a language
model's modelled weights part by them (``passes``), and the lab's calibration is fitted with them. A zoo
step's linear layers take the few-row kernel's alone (``few_row_passes``, app/perfmodel/model.py
``_passes``): an MLP at batch 4 on the Intel VM ran at 1.9-2.1x batch 1's samples/s, not 3.3x
(``benchmarks/few_rows.py --batches``); the matrix kernel's packing there is eager PyTorch's cost against
a graph runtime's, which the eager kernel factor carries for every vendor alike.

Only paths a run measured are shipped; any other reads its weights once, the model as it was. MKL on an
AMD CPU (its AVX2 code, whatever the units) is shipped from session 60's Zen 4 VM: each of 1-3 rows
streams the weights again (2.0x and 3.0x one row's time), and from 4 rows the matrix kernel packs them
once per call (1.74x one row), as two Zen 3 VMs had shown at 2-3 rows. The shared calibration's weights,
fitted on the Zen 5 VM's batch 1 and 4, are fitted with them; held out, that Zen 4 VM's fp32 decode at
batch 1-64 went 0.30 -> 0.14 mean abs log error (docs/ACCURACY.md, session 60). A 16-bit product is
oneDNN's (AMX on an Intel CPU: a bf16 decode's step as long at batch 16 as at 1), and ONNX Runtime has its
own kernels: one pass. MKL's AVX2 code on an Intel CPU (no AVX-512: Sierra Forest, client parts) is
unmeasured.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.catalog import CatalogHardware
from app.contracts import Precision

PATH = Path(str(resources.files("app.perfmodel").joinpath("data/weight_passes.json")))

MKL_AVX512_INTEL = "mkl-avx512-intel"
"""MKL's AVX-512 code, which it takes on an Intel CPU with AVX-512."""
MKL_AMD = "mkl-amd"
"""MKL's code for other vendors' CPUs (AVX2), which it takes on an AMD CPU whatever its units."""


def path_of(hardware: CatalogHardware, precision: Precision) -> str | None:
    """The BLAS path of PyTorch's products on ``hardware`` at math precision ``precision``: MKL's, by the
    code it takes on the CPU, for fp32; None for other precisions (oneDNN), GPUs, and an Intel CPU whose
    instruction set the catalog does not give as AVX-512."""
    if hardware.kind != "cpu" or precision is not Precision.fp32:
        return None
    vendor = hardware.vendor.lower()
    if "amd" in vendor:
        return MKL_AMD
    if "intel" in vendor and (hardware.isa or "").startswith("AVX-512"):
        return MKL_AVX512_INTEL
    return None


class PathPasses(BaseModel):
    """One BLAS path's passes over the weights, as ``benchmarks/linear_rows.py --passes --write`` measured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    few_rows: list[float] = Field(
        min_length=1,
        description="At 1, 2, ... rows, the passes over the weights of the kernel for few rows: its time over one "
        "row's, to the nearest whole pass (one row streams them once).",
    )
    matrix: float = Field(
        gt=0,
        description="From one row more than ``few_rows`` covers: the matrix kernel's time per call less its time "
        "per row (least squares over 16-256 rows), over one row's time: the weights packed once per call.",
    )
    source: str = Field(description="What measured it: the script, the CPU, torch's version, the date.")

    @model_validator(mode="after")
    def _one_row_one_pass(self) -> PathPasses:
        if self.few_rows[0] != 1 or any(p < 1 for p in self.few_rows):
            raise ValueError("weight_passes: one row reads the weights once, and more rows at least once")
        return self

    def passes(self, rows: int) -> float:
        """The passes a product of ``rows`` rows makes over its weights."""
        return self.few_rows[rows - 1] if rows <= len(self.few_rows) else self.matrix


class WeightPasses(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    paths: dict[str, PathPasses] = Field(default_factory=dict)


@lru_cache(maxsize=1)
def shipped() -> WeightPasses:
    if not PATH.is_file():
        return WeightPasses()
    return WeightPasses.model_validate(json.loads(PATH.read_text(encoding="utf-8")))


def measured(path: str | None) -> PathPasses | None:
    """The shipped passes of BLAS path ``path`` (``path_of``); None where no run measured it, or none."""
    return shipped().paths.get(path) if path else None


def passes(path: str | None, rows: int) -> float:
    """The passes over its weights a product of ``rows`` rows makes on BLAS path ``path`` (``path_of``):
    the shipped measurement's, else 1 (a path nothing measured, or none)."""
    found = measured(path)
    return found.passes(max(1, rows)) if found else 1.0


def few_row_passes(path: str | None, rows: int) -> float:
    """``passes`` where a product of ``rows`` rows takes the few-row kernel; 1 from the matrix kernel on,
    whose packing a zoo step's eager kernel factor already carries (app/perfmodel/model.py ``_passes``)."""
    found = measured(path)
    return found.passes(max(1, rows)) if found and rows <= len(found.few_rows) else 1.0
