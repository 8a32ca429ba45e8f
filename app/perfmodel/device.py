"""What a device can do, read from its catalog entry: the peak of the math units a precision runs
on, the plain vector peak, the memory bandwidth, the cache, the unit count and the power range.

The peaks are the catalog's dense figures (tensor peaks accumulate in FP32, what mixed precision
uses). A precision whose peak the catalog lacks cannot be predicted on that device: ``missing`` says
so in words, and the model never borrows another precision's figure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from app.catalog import CatalogHardware
from app.catalog.probed import AVX2_FLOP_PER_CYCLE, flop_per_cycle  # AVX2's: the rate of MKL on an AMD CPU
from app.contracts import Precision
from app.perfmodel import core_stream, weight_passes

_PEAK_FIELD = {
    Precision.fp32: "peak_fp32_tflops",
    Precision.tf32: "peak_tf32_tflops",
    Precision.bf16: "peak_bf16_tflops",
    Precision.fp16: "peak_fp16_tflops",
    Precision.int8: "peak_int8_tops",
}


ENERGY_WEIGHT = {
    Precision.fp16: 1.0,
    Precision.bf16: 1.0,
    Precision.tf32: 2.0,
    Precision.fp32: 4.0,
    Precision.int8: 0.5,
}
"""Energy of one FLOP of the precision's matrix math relative to FP16: the same units run TF32 at half
the FP16 rate and INT8 at twice it, within the same power; FP32 runs on the vector units at a quarter."""


VECTOR_FLOPS_PER_SM_CLOCK = 128.0
"""The rate the model takes for a GPU's plain (non-tensor) kernels: FLOPs per SM per clock. Elementwise,
normalisation and reduction kernels run at a rate set by how many SMs issue them and how fast, not by
the FP32 lanes' peak: Hopper doubled the A100's 64 FP32 lanes per SM, and these kernels did not get
twice as fast. 128 is the A100's FP32 rate; the model learns the efficiency reached against it."""


def mkl_on_amd(hardware: CatalogHardware) -> bool:
    """Whether PyTorch's BLAS on ``hardware`` is MKL on an AMD CPU (the catalog's vendor "AMD", a probe's
    "AuthenticAMD"), where MKL takes its code for other vendors' CPUs: AVX2 kernels (``blas_share``) and
    a product of few rows on few threads (app/perfmodel/mkl_split.py): its fp32 BLAS path is MKL's AMD code
    (app/perfmodel/weight_passes.py ``path_of``)."""
    return weight_passes.path_of(hardware, Precision.fp32) == weight_passes.MKL_AMD


def blas_share(hardware: CatalogHardware, precision: Precision) -> float:
    """The share of ``hardware``'s matrix peak that PyTorch's fp32 linear layers and matmuls can reach
    through its BLAS. On x86 that BLAS is MKL, which runs its AVX2 kernels on an AMD CPU: a Zen 5 core
    does 64 FP32 FLOPs per cycle on its 512-bit FMA units, MKL's SGEMM 32 (this project's Zen 5 VM, one
    thread, 2048^3: torch.mm 104 GFLOP/s where oneDNN, ONNX Runtime's MLAS and OpenBLAS reached
    227-238). 1 elsewhere: Intel CPUs (MKL's AVX-512 kernels), AMD parts whose units are no wider than
    AVX2's (Zen to Zen 4), other precisions (oneDNN), GPUs. PyTorch's convolutions and recurrent layers
    go to oneDNN, which uses every unit: the model applies the share to linear layers and attention's
    matmuls alone (app/perfmodel/model.py)."""
    if precision is not Precision.fp32 or not mkl_on_amd(hardware):
        return 1.0
    per_cycle = flop_per_cycle(hardware)
    if not per_cycle:
        return 1.0
    # MKL's kernels run at no more than AVX2's rate: a share of the peak, never a faster rate on a faster
    # part; 0.1% of slack for the catalog's rounded peaks, so that a part as wide as AVX2 keeps all of it
    return min(1.0, AVX2_FLOP_PER_CYCLE * 1.001 / per_cycle)


def peak_field(precision: Precision) -> str | None:
    """The catalog field of the peak ``precision`` runs at (None for int4, which has none)."""
    return _PEAK_FIELD.get(precision)


def peak(hardware: CatalogHardware, precision: Precision) -> float | None:
    """The catalog's peak of the math units ``precision`` runs on (TFLOP/s; int8: TOP/s); None where the
    catalog lacks it, and for int4, which is weight storage, not math (see ``Precision.int4``)."""
    field = peak_field(precision)
    return getattr(hardware, field) if field else None


TILE_UNIT_TIMES_FP32 = 8.0
"""A CPU precision whose peak is more than this many times the FP32 FMAs' runs on tile units (AMX:
bf16 at 16x, int8 at 32x); at or below, on the vector units (AVX512_BF16 2x, VNNI int8 4x)."""


def matrix_unit(hardware: CatalogHardware, precision: Precision) -> str | None:
    """What a CPU's ``precision`` runs on: 'tile' (AMX) or 'vector' (AVX-512, VNNI, AVX2); None for
    fp32, for a GPU, and where the catalog lacks the peak. Eager PyTorch reaches very different shares
    of the two (an Emerald Rapids VM without AMX ran bf16 at 0.57-0.84x its fp32 where the model, at
    AVX512_BF16's rate, puts 1.7-1.9x), so a lab correction measured on one never calibrates the other
    (app/recommender/estimators/modelled.py ``lab_correction``)."""
    given, fp32 = peak(hardware, precision), hardware.peak_fp32_tflops
    if hardware.kind != "cpu" or precision is Precision.fp32 or not given or not fp32:
        return None
    return "tile" if given > TILE_UNIT_TIMES_FP32 * fp32 else "vector"


def runs_on_tiles(parts: Iterable[CatalogHardware], precision: Precision) -> bool:
    """Whether ``precision`` runs on the tile units of any of ``parts`` (a lab machine known by its
    generation may be any of them): what sets a CPU figure apart from the lab level and its factors."""
    return any(matrix_unit(part, precision) == "tile" for part in parts)


def on_tiles(dev: Device) -> bool:
    """Whether ``dev``'s precision runs on a CPU's tile units: ``matrix_unit``'s test on the model's figures
    (a CPU's ``vector`` is its FP32 peak)."""
    return dev.kind == "cpu" and dev.matrix > TILE_UNIT_TIMES_FP32 * dev.vector


@dataclass(frozen=True, slots=True)
class Device:
    """A catalog part in the model's units (FLOP/s, bytes/s, bytes, watts)."""

    id: str
    name: str
    kind: str  # "gpu" or "cpu"
    matrix: float
    """FLOP/s of the units the precision's convolutions and GEMMs run on."""
    vector: float
    """FLOP/s of plain vector math (elementwise, normalisation, reductions, optimiser): a CPU's FP32
    peak; a GPU's SMs x clock x VECTOR_FLOPS_PER_SM_CLOCK where both are known."""
    bandwidth: float
    cache: float
    """Last-level on-chip cache in bytes (L2 of a GPU, L3 of a CPU); 0 when unknown."""
    units: float
    """Streaming multiprocessors / compute units (GPU) or cores (CPU); 1 when unknown."""
    tdp_w: float | None
    limit_min_w: float | None
    limit_max_w: float | None
    matrix_watts: float = float("inf")
    """The board power in FP16-equivalent watts (TDP / ENERGY_WEIGHT): what bounds the matrix units
    when the peak needs more energy than the board may draw."""
    clock_hz: float = 0.0
    """A GPU's boost clock, which its peaks are quoted at; 0 when unknown and for CPUs."""
    turbo: float = 1.0
    """A CPU's highest turbo clock over the base clock its peaks are quoted at (1 when unknown and for
    GPUs): how much faster a core runs when few are busy (app/perfmodel/model.py, ``scaled``)."""
    blas_share: float = 1.0
    """The share of ``matrix`` PyTorch's linear layers and matmuls reach through its BLAS (``blas_share``)."""
    core_bandwidth: float = math.inf
    """Bytes per second one of a CPU's cores streams on its own, its architecture's measured **core
    stream** (app/perfmodel/core_stream.py); inf where no run measured it, and for GPUs."""
    blas_path: str | None = None
    """The code PyTorch's products at this precision take in the CPU's BLAS (app/perfmodel/weight_passes.py
    ``path_of``), which says how many times a product of few rows reads its weights; None elsewhere."""

    @property
    def mkl_split(self) -> bool:
        """Whether PyTorch's products at this precision are MKL's fp32 ones on an AMD CPU (its BLAS path),
        which run a product of few rows on fewer threads than they may use (app/perfmodel/mkl_split.py)."""
        return self.blas_path == weight_passes.MKL_AMD


def missing(hardware: CatalogHardware, precision: Precision) -> str | None:
    """Why ``hardware`` cannot be modelled at ``precision``, or None when it can."""
    if precision not in _PEAK_FIELD:
        return f"{precision.value} is weight-only storage, not math: no catalog part has an {precision.value} peak"
    if not peak(hardware, precision):
        return f"the catalog has no {precision.value} peak for {hardware.name}"
    if not hardware.peak_fp32_tflops:
        return f"the catalog has no fp32 peak for {hardware.name}"
    if not hardware.memory_bandwidth_gb_s:
        return f"the catalog has no memory bandwidth for {hardware.name}"
    return None


def device(hardware: CatalogHardware, precision: Precision) -> Device | None:
    """The device at ``precision``; None when a figure it needs is missing (see ``missing``)."""
    if missing(hardware, precision) is not None:
        return None
    assert hardware.peak_fp32_tflops and hardware.memory_bandwidth_gb_s
    cache_mb = hardware.l2_mb if hardware.kind == "gpu" else hardware.l3_mb
    units = hardware.sm_count if hardware.kind == "gpu" else hardware.cores
    clock_hz = (hardware.boost_mhz or 0.0) * 1e6 if hardware.kind == "gpu" else 0.0
    vector = hardware.peak_fp32_tflops * 1e12
    if clock_hz and units:
        vector = units * clock_hz * VECTOR_FLOPS_PER_SM_CLOCK
    turbo = 1.0
    if hardware.kind == "cpu" and hardware.base_ghz and hardware.max_ghz:
        turbo = max(1.0, hardware.max_ghz / hardware.base_ghz)
    return Device(
        id=hardware.id,
        name=hardware.name,
        kind=hardware.kind,
        matrix=float(peak(hardware, precision) or 0.0) * 1e12,
        vector=vector,
        bandwidth=hardware.memory_bandwidth_gb_s * 1e9,
        cache=(cache_mb or 0.0) * 1e6,
        units=units or 1.0,
        clock_hz=clock_hz,
        tdp_w=hardware.tdp_w,
        limit_min_w=hardware.power_limit_min_w,
        limit_max_w=hardware.power_limit_max_w or hardware.tdp_w,
        matrix_watts=hardware.tdp_w / ENERGY_WEIGHT[precision] if hardware.tdp_w else float("inf"),
        turbo=turbo,
        blas_share=blas_share(hardware, precision),
        core_bandwidth=core_stream.shipped().bandwidth(hardware.architecture) if hardware.kind == "cpu" else math.inf,
        blas_path=weight_passes.path_of(hardware, precision),
    )
