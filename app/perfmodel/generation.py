"""A language model's prefill and decode predicted on any catalog part, for any shape and context.

The step is the written-down profile of app/perfmodel/llm.py (the recorder's operators, for the
asked shape, context and batch), timed by the device model of app/perfmodel/model.py with the shipped
calibration of the part's kind, unchanged. Prefill over P tokens comes out compute-bound (its GEMMs
have P rows per sequence); decode at batch B and context L reads every weight once and B x L tokens
of KV cache per step, so it comes out bandwidth-bound, plus the per-kernel and per-operator costs the
model already has (about 40 kernels per layer per token: the per-token overhead).

On top, the lab's own prefill/decode measurements calibrate the step (``LlmCalibration``,
app/perfmodel/data/llm.json, written by ``benchmarks/llm_accuracy.py --write``). The modelled step is
split into four parts (``COMPONENTS``): compute, reading the weights, reading the KV cache (the model's
memory time shared by bytes), and the rest (per-kernel and host costs); per kind of device, task and
precision the measured step is fitted as a non-negative sum of them (least squares on relative errors), a
decode's compute weight held at the prefill's of its precision (``COMPUTE``: since session 60; fitted
free, the Zen 5 VM's bf16 decode at batch 1 and 4 put it at 0). The parts scale apart across presets,
contexts and batches, which one factor cannot follow: on this project's Zen 5 VM a bf16 decode reads its
KV cache some 60x slower than the bandwidth allows (PyTorch's CPU attention in bf16 takes a slow path)
while its weights stream at 3x the model's time, so a factor per task left 27% held-out error and the
parts leave 11%. Those weights are the calibration machine's vendor's. Another vendor whose own machines
measured enough (three or more, each described by rule: benchmarks/data/llm_heldout/machines.json) has
weights of its own for a task and precision where, each machine held out, weights fitted on the others
predict it better than the shared ones (``LlmCalibration.vendor_weights``; a probe's CPUID vendor is
named as the catalog names it, ``catalog_vendor``): PyTorch's bf16 attention on an Intel CPU takes its KV
cache's reads at some 7x the modelled time, not 60x, and its fp32 products run at AVX-512's rate. Their
host part (``HOST``) keeps the shared weight: every lab VM of a vendor streams at about the same
bandwidth, so its steps cannot tell host time from weight reads, and a catalog part with thirty times the
bandwidth would carry whichever the fit chose (held free, Intel's came out at 1.25 against the Zen 5 VM's
0.23, and a Xeon's host-bound decode at 4.7x an EPYC's). Those of a vendor's machines whose precision
runs on tile units (AMX), three or more, have weights of their own in turn ('<vendor>/tile',
``weights_groups``), kept where they beat the vendor's: an Emerald Rapids VM without AMX ran eager bf16
slower than its fp32, those with it faster. A precision with too few measurements keeps one factor per
kind and task (the ratio of measured to modelled step time, geometric mean): GPUs have hwadvisor's H200
reference run's settled llama3_1b prefill and decode, which set one factor per task for the vendor and
runtime measured (``LlmCalibration.vendors`` and ``runtimes``: NVIDIA's eager PyTorch, whose batch-1
steps are the host's; never carried to another vendor's stack nor to a compiled step, which the serving
planner models). A kind, vendor or runtime nothing measured has none (1) and says so in its band's kind
(``gpu-llm-uncalibrated``). The CPU's calibration, measured eager too, stands for every runtime: its
steps are mostly the weights' and the cache's reads, which compiling does not change. A step's band is
never narrower than the machine band of its regime (app/perfmodel/predict.py ``machine_band``): a catalog
part's figure stands for any machine of it. PyTorch's fp32 products on an AMD CPU run on as many of the
threads asked as MKL splits them over (``product_threads``, app/perfmodel/mkl_split.py): one for a decode
at batch 1, a fraction of a many-core part's for a few sequences, so those parts of its step are modelled
on that many cores (``modelled_parts``). The lab measured at one thread; where a calibrated weight says a
memory part ran slower than the bandwidth, that excess is the cores' work, which more threads share
(``LlmCalibration.seconds``, ``one_core_work``): on the weights of an AMD CPU's fp32 products, only the
threads MKL splits their columns over (``weight_threads``). And a product of few rows reads its weights
as many times as the CPU's BLAS path makes passes over them at its rows (``weight_reads``,
app/perfmodel/weight_passes.py): an Intel CPU's fp32 products, once per three rows to 15, an AMD CPU's
once per row to 3, then the matrix kernel's packing; the calibration is fitted so.
benchmarks/llm_accuracy.py reports the error of the whole with one preset held out at a time, and the GPU
factors' held-out errors.

Tensor parallelism (``shards`` devices per copy) is modelled as Megatron-style sharding: each device
runs the shape with heads, kv-heads (replicated below one per device), MLP width and vocabulary split
``shards`` ways, and two all-reduces of the hidden state per layer cross the devices' link.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from app.catalog import CatalogHardware
from app.contracts import LLM_PRESETS, LlmShape, Precision, Task
from app.perfmodel import llm, mkl_split, weight_passes
from app.perfmodel.bands import regime
from app.perfmodel.device import Device, device, on_tiles, peak
from app.perfmodel.model import Breakdown, Case, is_pytorch, scaled, steps
from app.perfmodel.nnls import nnls
from app.perfmodel.params import shipped as calibration
from app.perfmodel.predict import band_of, machine_band
from app.perfmodel.profile import Profile
from app.perfmodel.profile import shipped as profiles
from app.perfmodel.scaling import TYPICAL, allreduce_seconds, ring_link

COMPONENTS = ("compute", "weights", "kv_cache", "other")
"""The parts of a modelled step the lab's measurements weigh apart (see the module docstring)."""
MIN_FIT = len(COMPONENTS)
"""Measurements of a kind, task and precision below which its parts are not weighed apart."""
HOST = COMPONENTS.index("other")
"""The part a vendor's own weights leave at the shared weight (``LlmCalibration.vendor_weights``)."""
COMPUTE = COMPONENTS.index("compute")
"""The part whose weight a decode takes from the prefill's at its precision: the math runs at one rate, which
a prefill's step (compute-bound) shows and a decode's at a few sequences (a few percent compute) cannot."""


CPUID_VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}
"""A probe's CPU vendor (the CPUID's string) as the catalog names it."""


def catalog_vendor(vendor: str) -> str:
    """``vendor`` as the catalog names it (a probe reports a CPU's by its CPUID string)."""
    return CPUID_VENDORS.get(vendor, vendor)


TILE_GROUP = "tile"
"""The part of a vendor's weights group (``weights_groups``) its machines whose precision runs on a CPU's
tile units (AMX) make: '<vendor>/tile'."""


def weights_groups(vendor: str | None, tiles: bool = False) -> list[str]:
    """The ``LlmCalibration.vendor_weights`` groups a step's weights are looked up in, the narrowest first:
    the vendor's machines whose precision runs on tile units, where the step's does ('<vendor>/tile', app/
    perfmodel/device.py ``on_tiles``), then the vendor's own."""
    if not vendor:
        return []
    return [f"{vendor}/{TILE_GROUP}", vendor] if tiles else [vendor]


class LlmCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    generated_by: str = "benchmarks/llm_accuracy.py --write"
    factors: dict[str, float] = Field(
        default_factory=dict, description="'<kind>/<task>' -> measured / modelled step time (geometric mean)."
    )
    weights: dict[str, list[float]] = Field(
        default_factory=dict,
        description="'<kind>/<task>/<precision>' -> the measured step as a sum of the modelled parts (COMPONENTS).",
    )
    vendor_weights: dict[str, dict[str, list[float]]] = Field(
        default_factory=dict,
        description="'<vendor>' -> '<kind>/<task>/<precision>' -> weights fitted on that vendor's own lab machines "
        "alone, kept where, each machine held out, they predicted it better than ``weights``: they stand for that "
        "vendor's devices in place of ``weights``. '<vendor>/tile': the same for its machines whose precision runs "
        "on tile units (AMX), kept where they beat the vendor's: they stand for its devices that run it so.",
    )
    bands: dict[str, float] = Field(
        default_factory=dict, description="'<kind>/<task>' -> absolute log error at 90% (leave one preset out)."
    )
    observations: dict[str, int] = Field(default_factory=dict)
    measured_on: list[str] = Field(default_factory=list, description="What the factors were fitted on, in words.")
    vendors: dict[str, list[str]] = Field(
        default_factory=dict,
        description="'<kind>' -> the vendors whose devices measured it, where the calibration stands for "
        "theirs alone (a GPU's eager stack is its vendor's: CUDA's is not ROCm's); absent: every vendor.",
    )
    runtimes: dict[str, list[str]] = Field(
        default_factory=dict,
        description="'<kind>' -> the runtimes it was measured with, where it stands for those alone (a GPU's "
        "eager step at batch 1 is its host's, which a compiled step does not pay); absent: every runtime.",
    )

    def covers(self, kind: str, vendor: str, runtime: str) -> bool:
        """Whether this calibration speaks for a step of ``runtime`` on a device of ``kind`` from ``vendor``."""
        vendors, runtimes = self.vendors.get(kind), self.runtimes.get(kind)
        return (vendors is None or vendor in vendors) and (runtimes is None or runtime in runtimes)

    def factor(self, kind: str, task: Task) -> float:
        return self.factors.get(f"{kind}/{task.value}", 1.0)

    def seconds(
        self,
        kind: str,
        task: Task,
        precision: Precision,
        parts: list[float],
        modelled_s: float,
        per_core: list[float] | None = None,
        vendor: str | None = None,
        tiles: bool = False,
    ) -> float:
        """The calibrated step: the modelled one's parts weighed apart where the lab measured enough of
        this precision (with ``vendor``'s own weights where it has them, its tile units' where the step's
        precision runs on them, ``tiles``: ``weights_groups``), else the modelled step scaled by the kind
        and task's factor.

        A weight above 1 says the part took longer than the model gives it: on a memory part, longer than
        the bandwidth (bf16's weights and KV cache on this project's VMs, at one thread). That excess is
        the cores' work, which more threads share (benchmarks/linear_rows.py: a bf16 product and bf16
        attention run 1.4-2x faster on two threads than on one, where a copy gains 1.24x), so such a part
        is the weight times one core's share of the work (``per_core``, ``Modelled.per_core``), but never
        less than the part as modelled. The lab measured at one thread, where the two are one."""
        key = f"{kind}/{task.value}/{precision.value}"
        own = (self.vendor_weights.get(group, {}).get(key) for group in weights_groups(vendor, tiles))
        weighed = next((w for w in own if w), None) or self.weights.get(key)
        if weighed is None:
            return modelled_s * self.factor(kind, task)
        cores = per_core or parts
        return sum(
            w * part if w <= 1 else max(part, w * core) for w, part, core in zip(weighed, parts, cores, strict=True)
        )

    def measured(self, kind: str, task: Task) -> bool:
        """Whether something measured this task on this kind of device (it has a band of its own)."""
        return f"{kind}/{task.value}" in self.bands

    def band(self, kind: str, task: Task) -> tuple[float, str]:
        """The band and its kind: the lab's leave-one-preset-out error where it has one; else the
        device model's band before calibration (nothing measured a language model on this kind: its
        efficiencies were learned on other workloads, and may not carry over)."""
        if self.measured(kind, task):
            return self.bands[f"{kind}/{task.value}"], f"{kind}-llm"
        return band_of(f"{kind}-uncalibrated"), f"{kind}-llm-uncalibrated"


@lru_cache(maxsize=1)
def shipped() -> LlmCalibration:
    path = resources.files("app.perfmodel").joinpath("data/llm.json")
    if not path.is_file():
        return LlmCalibration()
    return LlmCalibration.model_validate(json.loads(path.read_text(encoding="utf-8")))


def fit_weights(
    parts: list[list[float]], measured_s: list[float], fixed: dict[int, float] | None = None
) -> list[float]:
    """Non-negative weights w minimising the relative error of sum(w x parts) against each measured step;
    the components ``fixed`` names (index -> weight) held at their weights, the others fitted."""
    held = fixed or {}
    free = [i for i in range(len(parts[0])) if i not in held]
    measured = np.array(measured_s)
    a = np.array(parts) / measured[:, None]
    b = np.ones(len(measured_s)) - sum((w * a[:, i] for i, w in held.items()), np.zeros(len(measured_s)))
    fitted = dict(zip(free, nnls(a[:, free], b), strict=True)) if free else {}
    return [float(held[i]) if i in held else float(fitted[i]) for i in range(len(parts[0]))]


@dataclass(frozen=True, slots=True)
class Step:
    """One prefill or decode step of one copy of the model (over ``shards`` devices)."""

    seconds: float
    breakdown: Breakdown
    """One device's step (its shard), before the calibration and the all-reduces."""
    parts: list[float]
    """The modelled step in COMPONENTS (seconds; on a CPU they add up to the breakdown's, but where the
    weight products run on fewer threads, ``product_threads``; on a GPU the host's time overlaps the
    device's and ``other`` is what sticks out)."""
    allreduce_s: float
    factor: float
    """The calibrated step over the modelled one (its weight products on ``product_threads`` cores where given)."""
    tokens: int
    band: float
    band_kind: str
    memory: Memory
    floored: bool = False
    """The calibrated step would have been shorter than ``floor_s``, and was held there."""
    product_threads: int | None = None
    """The cores its weight products were modelled on, where fewer than the step's, as PyTorch runs them
    (``product_threads``)."""


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


WEIGHT_ONLY = (Precision.int8, Precision.int4)
"""A language model's int8 and int4 are weight-only: the weights stored so, the math in 16 bits."""


def math_precision(hardware: CatalogHardware, precision: Precision) -> Precision:
    """The precision the step's math runs in: the asked one, or for weight-only int8 and int4 the
    part's bf16, else fp16, else fp32 (what the weights are dequantised to)."""
    if precision not in WEIGHT_ONLY:
        return precision
    return next((p for p in (Precision.bf16, Precision.fp16) if peak(hardware, p)), Precision.fp32)


def memory(shape: LlmShape, task: Task, precision: Precision, batch: int, context: int, shards: int = 1) -> Memory:
    """What one device holds: its share of the weights and KV cache, and the step's activations."""
    part = shard(shape, shards) or shape
    size = llm.ACTIVATION_BYTES[precision]
    return Memory(
        weights=llm.weights_bytes(part, precision),
        kv_cache=part.kv_cache_bytes(llm.kv_cache_length(task, context), batch, size),
        activations=llm.activations_bytes(part, task, batch, context, precision),
    )


def mkl_rows(dev: Device, task: Task, batch: int, context: int, runtime: str) -> int | None:
    """The rows of the step's weight products where MKL's grid of threads lays them out: an AMD CPU's fp32
    products (``Device.mkl_split``, ``dev`` at the step's math precision, ``math_precision``) in PyTorch
    (eager or compiled, ``model.PYTORCH_RUNTIMES``; ``llm.step_rows``). None elsewhere: every thread takes its
    share."""
    if not (dev.mkl_split and is_pytorch(runtime)):
        return None
    return llm.step_rows(task, batch, context)


def product_threads(dev: Device, task: Task, batch: int, context: int, runtime: str, threads: int) -> int:
    """The threads of ``threads`` the step's weight products run on: as many as MKL splits an fp32 product
    of the step's rows over on an AMD CPU (``Device.mkl_split``, ``dev`` at the step's math precision,
    ``math_precision``; ``mkl_split.product_threads``), in PyTorch (eager or compiled,
    ``model.PYTORCH_RUNTIMES``); every thread elsewhere. A decode multiplies one row per sequence, a
    prefill one per prompt token.

    One row is MKL's SGEMV, on one thread however many are allowed (pytorch/pytorch#96643, open); more
    rows are SGEMM, which gives them to a few of its grid's groups of threads: on this project's AMD VMs
    two threads bought a batch-4 decode 0.96-1.13x and the Intel VM's 1.6-1.9x
    (benchmarks/llm_cpu_threads.toml), as the grid says (2 threads: 2-4 rows on one). The grid at 1-256
    threads is measured on any machine (benchmarks/linear_rows.py --split; docs/ACCURACY.md, session 49).
    torch.compile's CPU code calls the same product (inductor's default lowering of a linear layer is
    aten's). A 16-bit product goes to oneDNN, ONNX Runtime has its own kernels (MLAS), and MKL on Intel
    CPUs takes other code: every thread works."""
    rows = mkl_rows(dev, task, batch, context, runtime)
    return threads if rows is None else mkl_split.product_threads(rows, threads)


def weight_threads(dev: Device, task: Task, batch: int, context: int, runtime: str, threads: int) -> int:
    """The threads of ``threads`` that share the step's work on its weights, where a calibrated weight says a
    part took longer than its reads (``LlmCalibration.seconds``): on an AMD CPU in PyTorch, MKL's fp32
    products split their rows over groups of threads and their columns within a group, and each group
    takes the whole weight matrix (``mkl_split.column_threads``: at two threads, one each); every thread
    elsewhere (``mkl_rows``). On session 56's Zen 5 VM two threads halved a prefill's time per token and
    left its time per step (the weights' part) where one thread had it (benchmarks/llm_prefill_threads.toml;
    docs/ACCURACY.md)."""
    rows = mkl_rows(dev, task, batch, context, runtime)
    return threads if rows is None else mkl_split.column_threads(rows, threads)


def weight_reads(dev: Device, task: Task, batch: int, context: int, runtime: str) -> float:
    """How many times the step's weight products read the weights (``dev`` at the step's math precision,
    ``math_precision``): the passes of the CPU's BLAS path at the rows they multiply (``llm.step_rows``;
    app/perfmodel/weight_passes.py), in PyTorch (eager or compiled, ``model.PYTORCH_RUNTIMES``); once
    elsewhere. On this project's Intel VM a decode at batch 4
    read its fp32 weights twice (batch 4 took 2.1x batch 1, 1-3 sequences the same time)."""
    if not is_pytorch(runtime):
        return 1.0
    return weight_passes.passes(dev.blas_path, llm.step_rows(task, batch, context))


def read_over(parts: list[float], reads: float) -> list[float]:
    """``parts`` (COMPONENTS) with the weights read ``reads`` times."""
    return [parts[0], parts[1] * reads, parts[2], parts[3]]


def parts_of(found: Breakdown, held: Memory) -> list[float]:
    """A modelled step in COMPONENTS: its compute, its memory time shared between the weights and the KV
    cache by their bytes, and the rest (per-kernel and host costs the device does not hide)."""
    kv_share = held.kv_cache / (held.weights + held.kv_cache) if held.kv_cache else 0.0
    return [
        found.compute_s,
        found.memory_s * (1 - kv_share),
        found.memory_s * kv_share,
        max(0.0, found.seconds - found.compute_s - found.memory_s),
    ]


class Modelled(NamedTuple):
    """A modelled step as the calibration weighs it."""

    parts: list[float]
    """In COMPONENTS."""
    seconds: float
    product_threads: int | None
    """The cores its weight products were modelled on, where fewer than the step's (``product_threads``)."""
    per_core: list[float] | None = None
    """In COMPONENTS, each part as one core's share of its work where the threads run on more than one
    core (``one_core_work``): what a calibrated weight above 1 scales (``LlmCalibration.seconds``). The
    memory parts' (compute and the rest are the parts themselves; the weights' are shared by the
    ``product_threads``). None on one core, or a GPU."""


def many_cores(dev: Device, threads: int | None) -> bool:
    """Whether a step on ``threads`` of ``dev``'s cores (all where not given) runs on more than one CPU core."""
    return dev.kind == "cpu" and (threads or dev.units) > 1


@lru_cache(maxsize=4096)
def one_core_work(dev: Device, threads: int | None) -> float:
    """One core's share of a memory part's work on ``threads`` of ``dev``'s cores (all where not given),
    as a multiple of the part as modelled there: the part on one core (at one core's share of the
    bandwidth: the part scales as its inverse) shared by the threads at the cores' compute rate
    (``threads`` cores at the clock so many busy cores hold, against one at its turbo clock; both from
    ``model.scaled``). 1 on a GPU, whose work the calibration does not split so, and on one core."""
    if not many_cores(dev, threads):
        return 1.0
    _, one_rate, one_bandwidth = scaled(dev, 1)
    _, rate, bandwidth = scaled(dev, threads)
    return (bandwidth / one_bandwidth) * (one_rate / rate)


def modelled_parts(
    profile: Profile,
    dev: Device,
    batch: int,
    runtime: str,
    threads: int | None,
    found: Breakdown,
    held: Memory,
    fewer: Breakdown | None = None,
    products_on: int | None = None,
) -> Modelled:
    """The step ``found`` (``profile`` at ``batch`` on ``threads`` of ``dev``, a device at the step's math
    precision, ``math_precision``) in COMPONENTS, and its seconds.
    Where its weight products run on fewer threads than ``found`` had (``product_threads``), its compute
    and its weights' reads are the step's on that many cores (``products_on`` and ``fewer`` where the
    caller has them: at the clock so many busy cores hold and their share of the bandwidth); the KV
    cache's reads (attention) and the rest use the threads ``found`` was modelled with. On a CPU the parts
    add up to the step. On more than one core, each memory part's work shared by the cores
    (``Modelled.per_core``); the weights' by those that split the weight matrix (``weight_threads``)."""
    context = profile.shape["sequence"]
    reads = weight_reads(dev, profile.task, batch, context, runtime)
    once = parts_of(found, held)
    parts = read_over(once, reads)
    seconds = found.seconds + parts[1] - once[1]  # on a GPU the parts overlap: only the extra reads add
    if not many_cores(dev, threads):
        return Modelled(parts, seconds, product_threads=None)
    work = one_core_work(dev, threads)
    asked = int(threads or dev.units)
    used = products_on
    if used is None:
        used = product_threads(dev, profile.task, batch, context, runtime, asked)
    # the weights' work is shared by the threads that split the weight matrix, not by all the product's
    unshared = used / weight_threads(dev, profile.task, batch, context, runtime, asked)
    per_core = [parts[0], parts[1] * work * unshared, parts[2] * work, parts[3]]
    if used >= asked:
        return Modelled(parts, seconds, product_threads=None, per_core=per_core)
    if fewer is None:
        (fewer,) = steps([Case(profile, dev, batch, runtime, threads=used)], calibration().of(dev.kind))
    products = read_over(parts_of(fewer, held), reads)
    parts = [products[0], products[1], parts[2], parts[3]]
    per_core = [products[0], products[1] * one_core_work(dev, used) * unshared, per_core[2], parts[3]]
    return Modelled(parts, sum(parts), product_threads=used, per_core=per_core)


def floor_s(found: Breakdown, held: Memory, dev: Device) -> float:
    """The least time a step can take on the part, whatever a calibration says: its FLOPs at the matrix
    peak, or the weights and KV cache it reads (all of them, every step) at the memory's bandwidth, less
    what the last-level cache could hold. A factor measured where the host bounds the step (the GPU
    runs' batch-1 decode, 0.47) would otherwise carry a step the memory bounds past its roofline: an L4
    decoding Llama-3-8B in bf16 (16 GB a token at 300 GB/s, 53 ms at least) was given 37 ms."""
    streamed = max(0.0, held.weights + held.kv_cache - dev.cache)
    return max(found.flops / dev.matrix, streamed / dev.bandwidth)


def calibrated_s(
    tuned: LlmCalibration,
    dev: Device,
    task: Task,
    precision: Precision,
    found: Breakdown,
    held: Memory,
    modelled: Modelled,
    vendor: str,
) -> tuple[float, bool]:
    """The modelled step (``modelled``, from ``found``) on a device of ``vendor`` as ``tuned`` calibrates
    it, no shorter than ``floor_s``; and whether the floor held it."""
    calibrated = tuned.seconds(
        dev.kind,
        task,
        precision,
        modelled.parts,
        modelled.seconds,
        modelled.per_core,
        catalog_vendor(vendor),
        tiles=on_tiles(dev),
    )
    floor = floor_s(found, held, dev)
    return max(calibrated, floor), floor > calibrated


def zoo_factor(
    workload: str,
    task: Task,
    precision: Precision,
    batch: int,
    hardware: CatalogHardware,
    runtime: str,
    found: Breakdown,
    threads: int | None = None,
) -> tuple[float, float, int | None] | None:
    """A zoo language model's step as the recommender modelled it (``found``, from its recorded profile,
    on ``threads`` of a CPU's cores) calibrated as ``step`` calibrates the serving planner's: the factor on
    its throughput (modelled over calibrated step time) and the calibration's band; None where nothing
    calibrates it (not a Llama preset's prefill or decode, a kind nothing measured, another vendor's stack
    or another runtime); and the cores its weight products were modelled on where fewer than the step's
    (``product_threads``)."""
    preset = LLM_PRESETS.get(workload)
    recorded = profiles().get((workload, task, precision))
    if preset is None or recorded is None or task not in (Task.prefill, Task.decode):
        return None
    tuned = shipped()
    if not tuned.measured(hardware.kind, task) or not tuned.covers(hardware.kind, hardware.vendor, runtime):
        return None
    dev = device(hardware, math_precision(hardware, precision))
    if dev is None:
        return None
    context = recorded.shape["sequence"]
    held = memory(preset.shape, task, precision, batch, context)
    modelled = modelled_parts(recorded, dev, batch, runtime, threads, found, held)
    calibrated, _ = calibrated_s(tuned, dev, task, precision, found, held, modelled, hardware.vendor)
    return found.seconds / calibrated, tuned.band(hardware.kind, task)[0], modelled.product_threads


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
    (found,) = steps_at(
        shape,
        task,
        precision,
        [batch],
        context,
        hardware,
        shards=shards,
        runtime=runtime,
        threads=threads,
        llm_calibration=llm_calibration,
    )
    return found


def steps_at(
    shape: LlmShape,
    task: Task,
    precision: Precision,
    batches: Sequence[int],
    context: int,
    hardware: CatalogHardware,
    *,
    shards: int = 1,
    runtime: str = "torch-eager",
    threads: int | None = None,
    llm_calibration: LlmCalibration | None = None,
) -> list[Step | None]:
    """``step`` at each of ``batches``, the device model evaluated once for all of them (what a serving
    plan asks of every part and precision)."""
    part = shard(shape, shards)
    dev = device(hardware, math_precision(hardware, precision))
    if part is None or dev is None:
        return [None] * len(batches)
    profile = profile_of(part, task, precision, context)
    breakdowns = steps([Case(profile, dev, b, runtime, threads) for b in batches], calibration().of(dev.kind))
    tuned = llm_calibration or shipped()
    if not tuned.covers(dev.kind, hardware.vendor, runtime):
        tuned = LlmCalibration()  # another vendor's stack, or another runtime's: nothing measured it
    band, band_kind = tuned.band(dev.kind, task)
    link = ring_link(hardware, shards) if shards > 1 else None
    made: list[Step | None] = []
    fewer: dict[int, Breakdown] = {}
    used: dict[int, int] = {}
    if many_cores(dev, threads):  # the batches whose products run on fewer threads, in one evaluation
        asked = int(threads or dev.units)
        used = {b: product_threads(dev, task, b, context, runtime, asked) for b in batches}
        few = [b for b in batches if used[b] < asked]
        cases = [Case(profile, dev, b, runtime, threads=used[b]) for b in few]
        fewer = dict(zip(few, steps(cases, calibration().of(dev.kind)), strict=True))
    for batch, found in zip(batches, breakdowns, strict=True):
        held = memory(shape, task, precision, batch, context, shards)
        modelled = modelled_parts(profile, dev, batch, runtime, threads, found, held, fewer.get(batch), used.get(batch))
        calibrated, floored = calibrated_s(tuned, dev, task, precision, found, held, modelled, hardware.vendor)
        exchanged = 0.0
        if link is not None:
            per_allreduce = llm.step_rows(task, batch, context) * shape.hidden * llm.ACTIVATION_BYTES[precision]
            exchanged = 2 * shape.layers * allreduce_seconds(per_allreduce, shards, link, TYPICAL)
        made.append(
            Step(
                seconds=calibrated + exchanged,
                breakdown=found,
                parts=modelled.parts,
                allreduce_s=exchanged,
                factor=calibrated / modelled.seconds,
                tokens=llm.step_rows(task, batch, context),
                # a catalog part's step stands for any machine of it: no narrower than machines of one
                # part measure apart
                band=max(band, machine_band(dev.kind, regime(found.host_s, found.device_s))),
                band_kind=band_kind,
                memory=held,
                floored=floored,
                product_threads=modelled.product_threads,
            )
        )
    return made
