"""Data-parallel training on several devices: the single-device step plus the gradient all-reduce.

Each of ``devices`` devices runs the single-device step (``single_step_s``, from the performance
model or a measured 1-device throughput) on its own ``batch``, then the gradients are summed across
devices. The sum is a **ring all-reduce** (what NCCL picks inside one machine for messages of
megabytes): each device sends and receives 2 (N - 1) / N of the gradient bytes over its slowest
link, in 2 (N - 1) hops. Tree all-reduce (NCCL's choice across machines for small messages) moves
the same bytes per device and is not modelled apart.

    all-reduce  = 2 (N - 1) / N x gradient bytes / (link_efficiency x link GB/s) + 2 (N - 1) x hop_s
    step        = single_step_s + max(0, all-reduce - overlap x single_step_s)
    throughput  = N x batch / step                                    (samples/s, all devices)

``overlap`` is the share of the single-device step behind which the all-reduce can hide: DDP
reduces gradient buckets while the backward pass still computes the earlier layers', so what sticks
out is the all-reduce beyond that window (the backward pass is about two thirds of a step; the
optimiser step and the forward pass of the next step cannot hide it). ``link_efficiency`` is the share
of the nominal per-direction bandwidth the all-reduce reaches (protocol, PCIe switch and CPU-socket
hops, no peer-to-peer on GeForce boards); ``hop_s`` is a fixed cost per ring hop (launch and
synchronisation). The three are fitted once for all parts (scripts/calibrate_scaling.py) and shipped
in app/perfmodel/data/scaling.json; nothing is tuned to one GPU.

Gradient bytes are the model's parameter count x the bytes of one gradient element as the
all-reduce sends it (``gradient_bytes``): 4 for FP32/TF32 training, 2 where mixed precision reduces
FP16 gradients (apex-style AMP in NVIDIA's DeepLearningExamples; native AMP reduces FP32 ones).

Pure numpy: no torch, no database. The link is read from the catalog entry (``link_of``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
import numpy.typing as npt

from app.catalog import CatalogHardware
from app.contracts import Precision
from app.errors import InvalidInput
from app.perfmodel.profile import Profile

LinkKind = Literal["nvlink", "pcie", "network"]
Array = npt.NDArray[np.float64]

PCIE_GB_S_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
"""PCIe payload bandwidth per lane and direction, GB/s, after line coding (8b/10b for gen 1-2,
128b/130b for gen 3-5; gen 6 after FLIT overhead)."""

WEIGHT_BYTES = 4.0
"""Bytes per parameter of a profile's ``memory.weights``: the zoo keeps FP32 weights at every
precision (autocast computes in half precision from FP32 master weights)."""

GRADIENT_BYTES = {Precision.fp32: 4.0, Precision.tf32: 4.0, Precision.bf16: 2.0, Precision.fp16: 2.0}
"""Bytes per gradient element the all-reduce sends, per training precision (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class Link:
    """The slowest device-to-device path a ring crosses: its kind and nominal GB/s per direction."""

    kind: LinkKind
    gb_s: float
    """Per device, per direction (half of NVIDIA's bidirectional NVLink figure)."""
    why: str = ""


@dataclass(frozen=True, slots=True)
class ScalingParams:
    link_efficiency: float
    """Share of the link's nominal per-direction bandwidth the all-reduce reaches."""
    overlap: float
    """Share of the single-device step the all-reduce can hide behind (0: none, 1: all of it)."""
    hop_s: float
    """Fixed seconds per ring hop (2 (N - 1) hops per all-reduce). Fitted on Lambda's rows it comes out
    in milliseconds, not NCCL's microseconds: it absorbs what PCIe machines lose per step beyond
    bandwidth (docs/ACCURACY.md, multi-GPU section)."""


TYPICAL = ScalingParams(link_efficiency=0.7, overlap=0.5, hop_s=1e-5)
"""What the model uses before any calibration: NCCL's bus bandwidth is about 70-80% of NVLink's and
PCIe's nominal; DDP hides roughly the backward pass; a hop costs about 10 us."""


def link_of(hardware: CatalogHardware, devices: int, *, bridged: bool = False) -> Link:
    """The link a ring of ``devices`` boards of ``hardware`` crosses.

    NVLink where every pair can use it: SXM/OAM modules (NVSwitch or a full NVLink mesh), and PCIe
    boards joined by NVLink bridges (``bridged``) when there are exactly 2 (a bridge joins pairs, so a
    ring of 4 or 8 crosses PCIe between pairs). Otherwise PCIe at the board's generation and width."""
    nvlink = hardware.nvlink_gb_s
    switched = hardware.form_factor in ("sxm", "oam")
    if nvlink is not None and (switched or (bridged and devices == 2)):
        why = "NVLink/NVSwitch module" if switched else "NVLink bridge, 2 boards"
        return Link("nvlink", nvlink / 2, f"{why}: {nvlink:g} GB/s bidirectional")
    gen, lanes = hardware.pcie_gen, hardware.pcie_lanes
    if gen is None or lanes is None or int(gen) not in PCIE_GB_S_PER_LANE:
        raise InvalidInput(
            f"{hardware.id} has no NVLink a ring of {devices} can use and no known PCIe generation and width",
            hint="add pcie_gen and pcie_lanes to its entry in app/catalog/curated/ (then scripts/build_catalog.py)",
        )
    return Link("pcie", PCIE_GB_S_PER_LANE[int(gen)] * lanes, f"PCIe gen {gen:g} x{lanes:g}")


ASSUMED_PCIE = (3, 16)
"""The link assumed for a part whose entry has neither NVLink nor a PCIe generation and width."""


def ring_link(hardware: CatalogHardware | None, devices: int) -> Link | None:
    """``link_of`` for a GPU, PCIe gen 3 x16 (said so in its words) where the entry gives no link; None
    for a CPU or an unknown part, whose peers are other machines across a network."""
    if hardware is None or hardware.kind == "cpu":
        return None
    try:
        return link_of(hardware, devices)
    except InvalidInput:
        gen, lanes = ASSUMED_PCIE
        return Link(
            "pcie", PCIE_GB_S_PER_LANE[gen] * lanes, f"PCIe gen {gen} x{lanes} (assumed: the catalog gives no link)"
        )


def gradient_bytes(profile: Profile, precision: Precision | None = None) -> float:
    """Bytes one all-reduce sums: the profile's parameters x the precision's gradient element."""
    parameters = profile.memory.weights / WEIGHT_BYTES
    return parameters * GRADIENT_BYTES.get(precision or profile.precision, 4.0)


def ring_bytes(gradient_bytes: float, devices: int) -> float:
    """Bytes each device sends (and receives) in a ring all-reduce: 2 (N - 1) / N x the gradients."""
    if devices < 1:
        raise InvalidInput(f"devices must be at least 1, not {devices}")
    return 2.0 * (devices - 1) / devices * gradient_bytes


def allreduce_seconds(gradient_bytes: float, devices: int, link: Link, params: ScalingParams = TYPICAL) -> float:
    """Seconds one ring all-reduce of ``gradient_bytes`` takes over ``link`` (0 on one device)."""
    if devices < 1:
        raise InvalidInput(f"devices must be at least 1, not {devices}")
    return float(_allreduce(_a(gradient_bytes), _a(devices), _a(link.gb_s), params.link_efficiency, params.hop_s))


def step_seconds(
    single_step_s: float, devices: int, gradient_bytes: float, link: Link, params: ScalingParams = TYPICAL
) -> float:
    """One data-parallel step: the single-device step plus the all-reduce it cannot hide."""
    if devices < 1:
        raise InvalidInput(f"devices must be at least 1, not {devices}")
    return float(_step(_a(single_step_s), _a(devices), _a(gradient_bytes), _a(link.gb_s), params))


def data_parallel_throughput(
    single_step_s: float,
    batch: int,
    devices: int,
    gradient_bytes: float,
    link: Link,
    params: ScalingParams = TYPICAL,
) -> float:
    """Samples per second of all ``devices`` together, each running ``batch`` samples per step."""
    return devices * batch / step_seconds(single_step_s, devices, gradient_bytes, link, params)


def data_parallel_throughputs(
    single_step_s: Array | float,
    batch: Array | float,
    devices: Array | float,
    gradient_bytes: Array | float,
    link_gb_s: Array | float,
    params: ScalingParams,
    link_factor: Array | float = 1.0,
) -> Array:
    """``data_parallel_throughput`` for many cases at once (arrays that broadcast: device counts, or rows).
    ``link_factor`` scales each case's all-reduce time: what the lab's own runs over that link said
    (app/perfmodel/lab_scaling.py); 1 is the model as fitted."""
    step = _exposed(
        _a(single_step_s),
        _a(devices),
        _a(gradient_bytes),
        _a(link_gb_s),
        params.link_efficiency,
        params.overlap,
        params.hop_s,
        _a(link_factor),
    )
    result: Array = _a(devices) * _a(batch) / step
    return result


def _a(value: Array | float) -> Array:
    return np.asarray(value, dtype=float)


def _allreduce(gradient: Array, devices: Array, gb_s: Array, efficiency: Array | float, hop_s: Array | float) -> Array:
    """Vectorised over cases (and, in the fit, over candidate parameters: arrays that broadcast)."""
    hops = 2.0 * (devices - 1)
    result: Array = hops / devices * gradient / (efficiency * gb_s * 1e9) + hops * hop_s
    return result


def _step(
    single: Array,
    devices: Array,
    gradient: Array,
    gb_s: Array,
    params: ScalingParams,
) -> Array:
    return _exposed(single, devices, gradient, gb_s, params.link_efficiency, params.overlap, params.hop_s)


def _exposed(
    single: Array,
    devices: Array,
    gradient: Array,
    gb_s: Array,
    efficiency: Array | float,
    overlap: Array | float,
    hop_s: Array | float,
    link_factor: Array | float = 1.0,
) -> Array:
    """The step: the single-device step plus the part of the all-reduce its overlap window cannot hide."""
    allreduce = _allreduce(gradient, devices, gb_s, efficiency, hop_s) * link_factor
    result: Array = single + np.maximum(0.0, allreduce - overlap * single)
    return result


# --- calibration -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """One measured data-parallel config, as the fit sees it."""

    single_step_s: float
    batch: int
    """Per device."""
    devices: int
    gradient_bytes: float
    link_gb_s: float
    throughput: float
    """Measured samples/s of all devices together."""


BOUNDS = {"link_efficiency": (0.01, 2.0), "overlap": (0.0, 1.0), "hop_s": (1e-7, 1e-2)}
"""The search box: efficiency and hop cost in log space, overlap linear. An efficiency above 1
would mean a faster link than the catalog's, allowed so that the fit can say the figure is low."""


def predict_cases(params: ScalingParams, cases: Sequence[Case]) -> Array:
    """Throughput of each case's config under ``params``."""
    a = _arrays(cases)
    step = _step(a["single"], a["devices"], a["gradient"], a["gb_s"], params)
    result: Array = a["devices"] * a["batch"] / step
    return result


def fit(
    cases: Sequence[Case], *, rounds: int = 6, points: int = 15, loss: Literal["squared", "absolute"] = "squared"
) -> ScalingParams:
    """The parameters minimising the squared (or absolute) log error over ``cases`` (a grid search that
    zooms in: the step's max() makes the loss kinked, which Gauss-Newton steps handle badly)."""
    if not cases:
        raise InvalidInput("no multi-device cases to fit the scaling model on")
    a = _arrays(cases)
    measured = np.log(a["throughput"])
    lo = np.array([math.log(BOUNDS["link_efficiency"][0]), BOUNDS["overlap"][0], math.log(BOUNDS["hop_s"][0])])
    hi = np.array([math.log(BOUNDS["link_efficiency"][1]), BOUNDS["overlap"][1], math.log(BOUNDS["hop_s"][1])])
    floor, ceiling = lo.copy(), hi.copy()
    best = (lo + hi) / 2
    for _ in range(rounds):
        axes = [np.linspace(lo[k], hi[k], points) for k in range(3)]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
        efficiency, overlap, hop = np.exp(grid[:, :1]), grid[:, 1:2], np.exp(grid[:, 2:3])
        step = _exposed(a["single"], a["devices"], a["gradient"], a["gb_s"], efficiency, overlap, hop)
        error = np.log(a["devices"] * a["batch"] / step) - measured
        total = (error**2 if loss == "squared" else np.abs(error)).sum(axis=1)
        best = grid[int(np.argmin(total))]
        width = (hi - lo) / (points - 1) * 2
        lo, hi = np.maximum(floor, best - width), np.minimum(ceiling, best + width)
    return ScalingParams(link_efficiency=math.exp(best[0]), overlap=float(best[1]), hop_s=math.exp(best[2]))


def _arrays(cases: Sequence[Case]) -> dict[str, Array]:
    return {
        "single": np.array([c.single_step_s for c in cases], dtype=float),
        "batch": np.array([c.batch for c in cases], dtype=float),
        "devices": np.array([c.devices for c in cases], dtype=float),
        "gradient": np.array([c.gradient_bytes for c in cases], dtype=float),
        "gb_s": np.array([c.link_gb_s for c in cases], dtype=float),
        "throughput": np.array([c.throughput for c in cases], dtype=float),
    }


# --- shipped parameters ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScalingCalibration:
    params: ScalingParams
    band: float | None
    """Absolute log error at 90% coverage, leave one config out; None before calibration."""
    cases: int
    generated_by: str = "scripts/calibrate_scaling.py"


@lru_cache(maxsize=1)
def shipped() -> ScalingCalibration:
    """The shipped fit (app/perfmodel/data/scaling.json); the typical values and no band without one."""
    path = resources.files("app.perfmodel").joinpath("data/scaling.json")
    if not path.is_file():
        return ScalingCalibration(TYPICAL, None, 0)
    raw = json.loads(path.read_text(encoding="utf-8"))
    return ScalingCalibration(
        params=ScalingParams(**{k: float(v) for k, v in raw["params"].items()}),
        band=raw.get("band"),
        cases=int(raw.get("cases", 0)),
        generated_by=str(raw.get("generated_by", "scripts/calibrate_scaling.py")),
    )
