"""A language model's prefill and decode predicted on any catalog part, for any shape and context.

The step is the written-down profile of app/perfmodel/llm.py (the recorder's operators, for the
asked shape, context and batch), timed by the device model of app/perfmodel/model.py with the shipped
calibration of the part's kind, unchanged. Prefill over P tokens comes out compute-bound (its GEMMs
have P rows per sequence); decode at batch B and context L reads every weight once and B x L tokens
of KV cache per step, so it comes out bandwidth-bound, plus the per-kernel and per-operator costs the
model already has (about 40 kernels per layer per token: the per-token overhead).

On top, one factor per kind of device and task (``LlmCalibration``, app/perfmodel/data/llm.json,
written by ``benchmarks/llm_accuracy.py --write`` from the lab's own prefill/decode measurements):
the ratio of measured to modelled step time, as a geometric mean. A kind the lab has not measured has none (1)
and says so in its band's kind (``gpu-llm-uncalibrated``). benchmarks/llm_accuracy.py reports the
error of the whole with one preset held out at a time.

Tensor parallelism (``shards`` devices per copy) is modelled as Megatron-style sharding: each device
runs the shape with heads, kv-heads (replicated below one per device), MLP width and vocabulary split
``shards`` ways, and two all-reduces of the hidden state per layer cross the devices' link.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from app.catalog import CatalogHardware
from app.contracts import LlmShape, Precision, Task
from app.perfmodel import llm
from app.perfmodel.device import device
from app.perfmodel.model import Breakdown, Case, steps
from app.perfmodel.params import shipped as calibration
from app.perfmodel.predict import band_of
from app.perfmodel.profile import Profile
from app.perfmodel.scaling import TYPICAL, allreduce_seconds, ring_link


class LlmCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    generated_by: str = "benchmarks/llm_accuracy.py --write"
    factors: dict[str, float] = Field(
        default_factory=dict, description="'<kind>/<task>' -> measured / modelled step time (geometric mean)."
    )
    bands: dict[str, float] = Field(
        default_factory=dict, description="'<kind>/<task>' -> absolute log error at 90% (leave one preset out)."
    )
    observations: dict[str, int] = Field(default_factory=dict)
    measured_on: list[str] = Field(default_factory=list, description="What the factors were fitted on, in words.")

    def factor(self, kind: str, task: Task) -> float:
        return self.factors.get(f"{kind}/{task.value}", 1.0)

    def band(self, kind: str, task: Task) -> tuple[float, str]:
        """The band and its kind: the lab's leave-one-preset-out error where it has one; else the
        device model's band before calibration (nothing measured a language model on this kind: its
        efficiencies were learned on other workloads, and may not carry over)."""
        key = f"{kind}/{task.value}"
        if key in self.bands:
            return self.bands[key], f"{kind}-llm"
        return band_of(f"{kind}-uncalibrated"), f"{kind}-llm-uncalibrated"


@lru_cache(maxsize=1)
def shipped() -> LlmCalibration:
    path = resources.files("app.perfmodel").joinpath("data/llm.json")
    if not path.is_file():
        return LlmCalibration()
    return LlmCalibration.model_validate(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True, slots=True)
class Step:
    """One prefill or decode step of one copy of the model (over ``shards`` devices)."""

    seconds: float
    breakdown: Breakdown
    """One device's step (its shard), before the factor and the all-reduces."""
    allreduce_s: float
    factor: float
    tokens: int
    band: float
    band_kind: str
    memory: Memory


@dataclass(frozen=True, slots=True)
class Memory:
    """Bytes one device of the copy holds."""

    weights: float
    kv_cache: float
    activations: float

    @property
    def total(self) -> float:
        return self.weights + self.kv_cache + self.activations


def shard(shape: LlmShape, shards: int) -> LlmShape | None:
    """What one of ``shards`` tensor-parallel devices runs; None when the heads cannot be split so."""
    if shards == 1:
        return shape
    if shape.heads % shards or shape.intermediate % shards or (shape.kv_heads % shards and shards % shape.kv_heads):
        return None
    return shape.model_copy(
        update={
            "heads": shape.heads // shards,
            "kv_heads": max(1, shape.kv_heads // shards),
            "intermediate": shape.intermediate // shards,
            "vocabulary": math.ceil(shape.vocabulary / shards),
            "head_dim": shape.dim,
        }
    )


@lru_cache(maxsize=4096)
def _profile(shape_json: str, task: Task, precision: Precision, context: int) -> Profile:
    return llm.profile("llm", LlmShape.model_validate_json(shape_json), task, precision, context)


def profile_of(shape: LlmShape, task: Task, precision: Precision, context: int) -> Profile:
    """The step's profile (cached: a plan asks for the same shapes on every part)."""
    return _profile(shape.model_dump_json(), task, precision, context)


def memory(shape: LlmShape, task: Task, precision: Precision, batch: int, context: int, shards: int = 1) -> Memory:
    """What one device holds: its share of the weights and KV cache, and the step's activations."""
    part = shard(shape, shards) or shape
    size = llm.STORED_BYTES[precision]
    return Memory(
        weights=llm.weights_bytes(part, precision),
        kv_cache=part.kv_cache_bytes(llm.kv_cache_length(task, context), batch, size),
        activations=llm.activations_bytes(part, task, batch, context, precision),
    )


def step(
    shape: LlmShape,
    task: Task,
    precision: Precision,
    batch: int,
    context: int,
    hardware: CatalogHardware,
    *,
    shards: int = 1,
    runtime: str = "torch-eager",
    threads: int | None = None,
    llm_calibration: LlmCalibration | None = None,
) -> Step | None:
    """One step at ``batch`` sequences (prefill: a prompt of ``context`` tokens each; decode: one token
    each over ``context`` cached); None when the part lacks a figure for the precision or the shape
    cannot be split ``shards`` ways."""
    part = shard(shape, shards)
    dev = device(hardware, precision)
    if part is None or dev is None:
        return None
    profile = profile_of(part, task, precision, context)
    (found,) = steps([Case(profile, dev, batch, runtime, threads)], calibration().of(dev.kind))
    tuned = llm_calibration or shipped()
    factor = tuned.factor(dev.kind, task)
    exchanged = 0.0
    link = ring_link(hardware, shards) if shards > 1 else None
    if link is not None:
        rows = batch * (context if task is Task.prefill else 1)
        per_allreduce = rows * shape.hidden * llm.STORED_BYTES[precision]
        exchanged = 2 * shape.layers * allreduce_seconds(per_allreduce, shards, link, TYPICAL)
    band, band_kind = tuned.band(dev.kind, task)
    tokens = batch * context if task is Task.prefill else batch
    return Step(
        seconds=found.seconds * factor + exchanged,
        breakdown=found,
        allreduce_s=exchanged,
        factor=factor,
        tokens=tokens,
        band=band,
        band_kind=band_kind,
        memory=memory(shape, task, precision, batch, context, shards),
    )
