"""A workload profile: what one training or inference step computes and moves, per operator class.

A profile is measured once per workload x task x precision on the CPU, from the project's own model
(app/bench/profiling.py records every aten operator of a step), and shipped as data
(app/perfmodel/data/profiles.json). Each operator is counted as eager PyTorch runs it: one kernel
per operator that computes, reading its inputs and writing its output from device memory (no fusion;
views and reshapes move nothing).

Every quantity is linear in the batch size: ``per_sample * batch + per_step``. Weights are read once
per step whatever the batch (``bytes_per_step``), activations scale with it (``bytes_per_sample``).
The profile is made at two batch sizes and the two coefficients solved from them, operator by
operator; operators of one class with a similar arithmetic intensity are summed into one bucket, so a
bucket is either compute- or memory-bound on a device, as its operators are.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.contracts import OpClass as OpClass  # the wire vocabulary; re-exported for the model
from app.contracts import Precision, Task

NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]


TENSOR_CLASSES = frozenset({OpClass.conv, OpClass.gemm, OpClass.attention, OpClass.recurrent})
"""Classes whose FLOPs run on the precision's matrix units (tensor cores, AMX) where the device has them."""


class Linear(BaseModel):
    """``per_sample * batch + per_step``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_sample: NonNegative = 0.0
    per_step: NonNegative = 0.0

    def at(self, batch: float) -> float:
        return self.per_sample * batch + self.per_step


class Bucket(BaseModel):
    """Operators of one class and a similar arithmetic intensity, summed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op_class: OpClass
    flops: Linear
    bytes: Linear
    kernels: NonNegative
    """Kernels launched per step (does not grow with the batch)."""
    operators: int = Field(
        ge=0,
        description="How many of the aten calls summed here Python made (autocast's casts are kernels of "
        "the call that asked for them, not calls of their own).",
    )


class Memory(BaseModel):
    """Bytes the step needs on the device, to check that a batch fits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: NonNegative
    activations: Linear
    """Peak live activations (inference) or those saved for the backward pass (training)."""
    optimizer_state: NonNegative = 0.0
    gradients: NonNegative = 0.0
    kv_cache: Linear = Linear()
    """A language model's KV cache at the profile's context (prefill, decode): per sequence."""

    def at(self, batch: float) -> float:
        return (
            self.weights + self.activations.at(batch) + self.optimizer_state + self.gradients + self.kv_cache.at(batch)
        )


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str
    task: Task
    precision: Precision
    shape: dict[str, int] = Field(description="The input's shape per sample: image side, sequence length.")
    buckets: list[Bucket]
    memory: Memory
    batches: tuple[int, int] = Field(description="The two batch sizes the coefficients were solved from.")
    made_with: str = Field(description="torch version and how the profile was recorded.")
    fusion: str = "none: eager, one kernel per operator, each reads its inputs and writes its output"

    def flops(self, batch: float) -> float:
        return sum(b.flops.at(batch) for b in self.buckets)

    def bytes(self, batch: float) -> float:
        return sum(b.bytes.at(batch) for b in self.buckets)

    def kernels(self) -> float:
        return sum(b.kernels for b in self.buckets)


class ProfileSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    generated_by: Literal["scripts/build_profiles.py"] = "scripts/build_profiles.py"
    profiles: list[Profile]


def profiled(task: Task, precision: Precision) -> bool:
    """Whether a workload's task and precision has a profile: int8 only for inference, where it is a
    quantised graph (ONNX Runtime, OpenVINO, LiteRT); int8 training does not exist, and a language
    model's int8 and int4 are llama.cpp's weight-only Q8_0 and Q4_0, measured in the lab, and
    modelled for serving from the written-down step (app/perfmodel/llm.py), not from a profile."""
    if precision is Precision.int4:
        return False
    return precision is not Precision.int8 or task is Task.infer


def key(workload: str, task: Task, precision: Precision) -> tuple[str, Task, Precision]:
    return (workload, task, precision)


@lru_cache(maxsize=1)
def shipped() -> dict[tuple[str, Task, Precision], Profile]:
    """The standard zoo's profiles, shipped with the package; empty if none were built."""
    path = resources.files("app.perfmodel").joinpath("data/profiles.json")
    if not path.is_file():
        return {}
    found = ProfileSet.model_validate(json.loads(path.read_text(encoding="utf-8")))
    return {key(p.workload, p.task, p.precision): p for p in found.profiles}
