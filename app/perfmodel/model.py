"""The step time of a workload profile on a device: a roofline per bucket of operators, plus the
per-kernel and per-step costs that make small batches slow.

For each bucket (operators of one class and a similar arithmetic intensity, app/perfmodel/profile.py)
at batch ``n``, with F its FLOPs, Q its bytes and K its kernels::

    compute = (F + K * half_work * units) / (efficiency[class] * peak)
    memory  = Q / min(memory_efficiency * bandwidth * (1 + cache_gain * min(1, cache / (Q / K))),
                      stream * units * clock)          (the stream term: eager PyTorch on a GPU alone)
    bucket  = compute + memory                          (SHARPNESS: chosen by leave-one-out)

``peak`` is the matrix-unit peak of the precision for convolutions, GEMMs, attention and recurrent
cells, and the plain vector rate for everything else (a GPU's SMs x clock, app/perfmodel/device.py);
on a GPU both are scaled by the share of its boost clock its power per SM sustains (``sustained_clock``).
``half_work`` is the work per unit (SM or core) at which a kernel reaches half its efficiency: a
batch-1 convolution cannot fill 132 SMs. The cache term lets a kernel whose working set fits the
last-level cache run faster than DRAM allows (the RTX 4090's 72 MB L2). An eager PyTorch kernel on a
GPU streams no more than the *eager stream rate* of bytes per SM per clock (``Params.stream``,
measured on hwadvisor's reference runs): on Hopper its SMs, not the DRAM, bound its memory-bound kernels.

A published stack's runs carry a *traffic factor* ``t`` (app/perfmodel/calibrate.py): every bucket's
bytes and the FLOPs of its non-matrix buckets are multiplied by ``t``. NGC's containers (DALI, AMP
with master weights and loss scaling, apex's fused kernels) do a different amount of elementwise work
and memory traffic per sample than the eager profile counts; without this factor the device's own
memory and vector efficiencies would absorb the difference, and eager predictions would inherit it.
The lab's eager runs, and every prediction for them, have ``t = 1``.

On a CPU, eager PyTorch's matrix kernels (oneDNN convolutions called one by one on plain-layout
tensors, MKL GEMMs) run slower than a graph runtime's (layouts and packed weights kept across the
graph): the class efficiencies, which OpenVINO's published runs set, are multiplied by the *eager
kernel factor* for ``torch-eager``, one for convolutions (``Params.eager_conv``) and one for the
GEMMs (``Params.eager_kernel``), measured on lab CPUs that ran both; where the precision runs on a
CPU's tile units (AMX), a factor of each of their own (``Params.eager_conv_tile``,
``Params.eager_kernel_tile``): eager PyTorch reaches a far smaller share of AMX's peak than a graph
runtime does, and than of the vector units'. PyTorch's linear layers and
matmuls (eager or compiled) go to its BLAS, MKL, whose kernels on an AMD CPU are AVX2's: on a part with
wider units (Zen 5) they reach ``Device.blas_share`` of the matrix peak (app/perfmodel/device.py), and
a step's products of few rows (a linear layer fed one vector per sample, at a small batch) run on the
few threads MKL gives them there (``few_row_shares``, the *few-row rule*), and each of their first three
rows reads the weights again; on an Intel CPU once per three rows (the *weight passes*,
app/perfmodel/weight_passes.py). On a GPU at 16-bit precision, eager PyTorch's channels-first
convolutions are transposed to channels-last and back by cuDNN (``relayout``): more traffic and kernels,
no new parameter.

The device's time is the buckets' sum plus ``kernel_s`` per kernel (launch latency and tail). The
host's time is ``dispatch_s`` per operator (eager PyTorch's Python and dispatcher, or a graph
runtime's much smaller executor cost), ``launch_s`` per kernel an operator launches beyond its first
(cuDNN's LSTM layer, a foreach optimiser update, a convolution's backward: one call from Python, the
rest launched from C++; likewise autocast's casts, launched inside the call that asked for them),
plus ``step_s`` per step; eager PyTorch's training step pays ``dispatch_s`` times the *autograd
factor* per operator (``Params.autograd``: recording the graph forward, running each node backward).
On a GPU both eager costs are measured on hwadvisor's reference runs (app/perfmodel/host.py), not
fitted. A GPU overlaps the two (the host
queues kernels ahead), so a step takes the smooth max of host and device time; a CPU does both on
the same cores, so it takes their sum. CPU peaks and bandwidth scale with the threads used, and the
clock with how many cores are busy (``scaled``).

Every parameter is shared by all devices of a kind (GPU or CPU) and learned from data
(app/perfmodel/calibrate.py); none is tuned to one part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from app.contracts import Task
from app.perfmodel import mkl_split, weight_passes
from app.perfmodel.device import Device, on_tiles
from app.perfmodel.profile import TENSOR_CLASSES, Bucket, OpClass, Profile

Array = npt.NDArray[Any]
Seconds = TypeVar("Seconds", float, Array)
Dispatch = Literal["eager", "graph"]
SHARPNESS = 1.0
"""p of the combination of compute and memory time per bucket: 1 adds them (no overlap). Chosen by
benchmarks/accuracy.py over 1, 1.5, 2, 4 and 8 (leave one GPU out: 7.7%, 7.9%, 8.2%, 9.9%, 11.3%):
within one bucket of eager kernels, loads and math barely overlap. With the traffic factor the
surface is flat and uneven (p = 1, 1.25, 1.5, 1.75, 2: 7.8%, 7.7%, 7.5%, 8.3%, 7.8%): differences
of that size are the fit's noise, so the simplest stays."""

EFFICIENCY_OF = {
    OpClass.conv: "conv",
    OpClass.gemm: "gemm",
    OpClass.attention: "attention",
    OpClass.recurrent: "recurrent",
}
EFFICIENCY_CLASSES = ("conv", "gemm", "attention", "recurrent", "vector")
"""The efficiencies a bucket's kernels run at: its class's where EFFICIENCY_OF names one, else the vector one."""
PARAMETERS = (
    "conv",
    "gemm",
    "attention",
    "recurrent",
    "vector",
    "memory",
    "cache_gain",
    "half_work",
    "kernel_s",
    "launch_s",
    "dispatch_eager_s",
    "dispatch_graph_s",
    "step_s",
    "flops_per_w",
    "sm_hz_per_w",
)
GRAPH_RUNTIMES = frozenset({"onnxruntime-cpu", "onnxruntime-cuda", "openvino", "torch-compile", "tensorrt"})
"""Runtimes that run a whole graph from C++: no Python per operator."""


def _named(runtime: str) -> str:
    return runtime.replace("_", "-")


def dispatch_of(runtime: str) -> Dispatch:
    return "graph" if _named(runtime) in GRAPH_RUNTIMES else "eager"


PYTORCH_RUNTIMES = frozenset({"torch-eager", "torch-compile"})
"""The runtimes whose linear layers and matmuls are aten's, and so their BLAS's (MKL on x86):
torch.compile's CPU code lowers them to the same calls (``Device.blas_share``)."""
BLAS_CLASSES = frozenset({OpClass.gemm, OpClass.attention})
"""The matrix classes PyTorch hands to its BLAS: linear layers and attention's matmuls (convolutions and
recurrent layers go to oneDNN)."""


def is_pytorch(runtime: str) -> bool:
    """Whether ``runtime`` is one of PYTORCH_RUNTIMES (either spelling)."""
    return _named(runtime) in PYTORCH_RUNTIMES


EAGER_RUNTIME = "torch-eager"
"""The runtime the eager kernel factor and the layout transposes apply to: PyTorch calling a library
kernel per operator, on its default (channels-first) layout."""
HALF_PRECISIONS = frozenset({"fp16", "bf16"})


def is_eager(runtime: str) -> bool:
    """Whether ``runtime`` is EAGER_RUNTIME (either spelling)."""
    return _named(runtime) == EAGER_RUNTIME


RELAYOUT_BYTES = 2.0
"""What a transposed convolution moves beyond its own traffic, in multiples of it: on a GPU at 16-bit
precision cuDNN runs its tensor-core convolutions on channels-last (NHWC) data and transposes
PyTorch's default channels-first (NCHW) operands into that layout and the result back, each a read and
a write of the tensor (cuDNN's documentation, "Tensor Transformations"; PyTorch's channels-last
tutorial; NVIDIA measured about 30% on ResNet-50 from keeping the data channels-last)."""
RELAYOUT_KERNELS = 2.0
"""The transposes' kernels per convolution kernel: one into NHWC, one back, launched by cuDNN."""


@dataclass(frozen=True, slots=True)
class Params:
    """The model's parameters for one kind of device (see PARAMETERS for their order)."""

    kind: str
    values: Mapping[str, float]
    eager_kernel: float = 1.0
    """The *eager kernel factor* of GEMMs (linear layers, attention's matmuls, recurrent cells): eager
    PyTorch's matrix kernels' efficiency relative to the graph runtimes' (whose published runs set the
    class efficiencies) on this kind of device. Not fitted with the rest: measured on lab CPUs that ran
    both on the same machine (app/perfmodel/runtime_pairs.py). 1 on GPUs, where eager PyTorch and a
    graph runtime call the same cuDNN and cuBLAS kernels and the difference is fusion (``fused``)."""
    eager_conv: float = 1.0
    """The eager kernel factor of convolutions, measured the same way on the pairs convolutions
    dominate. Apart from the GEMMs' because the cost is another: a oneDNN convolution called on
    PyTorch's plain layout reorders its input, output and weights to the blocked layout and back on
    every call, where a GEMM packs its weights."""
    eager_conv_tile: float | None = None
    """The *eager tile factors*: ``eager_conv``'s and ``eager_kernel``'s for a precision that runs on a
    CPU's tile units (AMX: ``device.on_tiles``). An Emerald Rapids VM ran eager bf16 at 0.17 of OpenVINO's
    on ResNet-50 and 0.30-0.52 on BERT-base, where the lab CPUs' fp32 ratios are 0.5-1.0: each call
    reorders its plain-layout bf16 tensors into AMX's tiles, which a graph runtime does once. Measured
    on the lab CPUs' pairs at such a precision (app/perfmodel/runtime_pairs.py); None where none was:
    the vector units' factor."""
    eager_kernel_tile: float | None = None
    """The GEMMs' eager tile factor (``eager_conv_tile``)."""
    autograd: float = 1.0
    """The *autograd factor*: a training step's host cost per operator in eager PyTorch (EAGER_RUNTIME)
    over an inference step's. Training records the autograd graph as it runs forward and runs each node
    of it backward, both on the host. Not fitted with the rest (the published training runs keep their
    GPUs busy and cannot see it): measured on hwadvisor's GPU reference runs (app/perfmodel/host.py).
    1 where it was not measured (CPUs)."""
    stream: float = 0.0
    """The *eager stream rate*: the bytes per SM per clock an eager PyTorch (EAGER_RUNTIME) kernel on a
    GPU moves at most, whatever the DRAM and the L2 could feed it: an SM-side limit (what a kernel keeps
    in flight per SM, or does per element on the way, as an NCHW batch norm), which an H200, with the
    H100's SMs and clock and 1.43x its bandwidth, shows by running eager steps only 1.07x as fast. One
    rate for every eager kernel, an average over kernels that differ. Not fitted with the rest (NGC's
    published stacks, channels-last and fused, show none): measured on the reference runs' pairs of
    parts (app/perfmodel/stream.py). 0 where it was not measured: no limit."""

    def __getitem__(self, name: str) -> float:
        return self.values[name]

    @property
    def conv_on_tiles(self) -> float:
        return self.eager_conv if self.eager_conv_tile is None else self.eager_conv_tile

    @property
    def kernel_on_tiles(self) -> float:
        return self.eager_kernel if self.eager_kernel_tile is None else self.eager_kernel_tile


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One step's time and where it goes (seconds per step)."""

    seconds: float
    compute_s: float
    memory_s: float
    device_s: float
    host_s: float
    flops: float
    bytes: float
    utilisation_compute: float
    """Achieved FLOP/s over the matrix peak (the units the heavy operators run on)."""
    utilisation_memory: float
    bound: str = field(default="compute")
    streamed_s: float = 0.0
    """The part of ``memory_s`` moved at the eager stream rate (``Params.stream``) rather than at the
    DRAM's: where the SMs, not the memory, bound an eager GPU step's memory-bound kernels."""
    product_threads: int | None = None
    """The fewest threads any of the step's products was modelled on, where fewer than the step's (an
    AMD CPU's few-row fp32 products, ``few_row_shares``); None where all run on every thread."""


@dataclass(frozen=True, slots=True)
class Columns:
    """Buckets of many (profile, batch, device) cases, aligned, with ``case`` saying whose each is."""

    case: npt.NDArray[np.int64]
    flops: Array
    bytes: Array
    kernels: Array
    operators: Array
    """Aten calls per bucket: what the host dispatches (an LSTM layer or a foreach update is one call
    that launches many kernels)."""
    tensor: npt.NDArray[np.bool_]
    efficiency: npt.NDArray[np.int64]
    """Per bucket, the index in EFFICIENCY_CLASSES of the efficiency its kernels run at."""
    convolution: npt.NDArray[np.bool_]
    blas: npt.NDArray[np.bool_]
    """Buckets of BLAS_CLASSES."""
    cases: int
    compute_share: Array | None = None
    """Per bucket, the share of its case's matrix peak its products run at, and of its bandwidth
    (``bandwidth_share``): less than 1 where they run on fewer threads than the case, or read their
    weights more than once (``few_row_shares``);
    None: 1 everywhere."""
    bandwidth_share: Array | None = None
    product_threads: list[int | None] | None = None
    """Per case, the fewest threads any of its products runs on where fewer than the case's (``FewRows``)."""


OVERLAP = 4.0
"""p of the smooth max of host and device time on a GPU: the host queues ahead, the step takes the larger."""


def _smooth_max(a: Seconds, b: Seconds, p: float) -> Seconds:
    """(a^p + b^p)^(1/p), for arrays or plain numbers alike."""
    found: Seconds = (a**p + b**p) ** (1.0 / p)
    return found


def combined(host: Seconds, device: Seconds, kind: str) -> Seconds:
    """A step's time from its host's and its device's (arrays or plain numbers alike): a GPU overlaps them
    (the host queues kernels ahead: their smooth max), a CPU does both on the same cores (their sum)."""
    return _smooth_max(device, host, OVERLAP) if kind == "gpu" else device + host


def sustained_clock(params: Params, clock_hz: Array, unit_watts: Array) -> Array:
    """The share of its boost clock a GPU holds under load: the board's power spread over its SMs
    buys ``sm_hz_per_w`` hertz per watt per SM, up to the boost clock. A 300 W RTX 6000 Ada (142 SMs)
    runs well below the boost clock its peaks are quoted at; a 450 W RTX 4090 (128 SMs) does not.
    1 for a device whose clock is not known (CPUs: their peaks are at the base clock already)."""
    known = clock_hz > 0
    share: Array = np.where(
        known, np.minimum(1.0, params["sm_hz_per_w"] * unit_watts / np.where(known, clock_hz, 1.0)), 1.0
    )
    return share


def fused(cols: Columns, dispatch: Array) -> tuple[Array, Array, Array]:
    """Per bucket, the kernels it launches, the calls it costs the host and the share of its traffic
    it keeps, as its case's runtime runs it.

    Eager PyTorch runs every operator as its own kernel, reading its inputs from memory and writing its
    output back. A graph runtime (ONNX Runtime, OpenVINO, TensorRT, torch.compile) folds an inference
    batch norm into the convolution before it and fuses the plain operators between two matrix
    operators (a bias, an activation, a residual add) into the matrix kernel's epilogue or into one
    kernel of their own, so a step of one launches at most as many plain kernels as matrix kernels (at
    least one). The plain buckets' kernels, calls and traffic are scaled down by that share: a fused
    chain reads and writes memory once where eager's operators each did. Their FLOPs stay (the math is
    still done); the matrix operators are untouched."""
    i, n = cols.case, cols.cases
    matrix_kernels = np.bincount(i, np.where(cols.tensor, cols.kernels, 0.0), n)
    plain_kernels = np.bincount(i, np.where(cols.tensor, 0.0, cols.kernels), n)
    share = np.minimum(1.0, np.maximum(matrix_kernels, 1.0) / np.maximum(plain_kernels, 1.0))
    scale = np.where(cols.tensor | (dispatch[i] > 0), 1.0, share[i])
    launched: Array = cols.kernels * scale
    called: Array = cols.operators * scale
    return launched, called, scale


class Fixed(NamedTuple):
    """What ``evaluate`` works out of its cases that no parameter changes (``fixed``): a fit evaluates the
    same cases thousands of times with other parameters, and takes these once. Per bucket but for the last
    three, per case."""

    launched: Array
    """Kernels launched: ``fused``'s, and the relayout's transposes (``RELAYOUT_KERNELS``)."""
    called: Array
    kept: Array
    relaid: npt.NDArray[np.bool_]
    """Whether its convolutions are transposed to NHWC and back (``RELAYOUT_BYTES``)."""
    tiled: npt.NDArray[np.bool_]
    """Whether its precision runs on the CPU's tile units (the eager tile factors)."""
    eager: npt.NDArray[np.bool_]
    """Whether the eager kernel factor and, on a GPU, the eager stream rate apply."""
    blas: Array
    """The share of the matrix peak its precision's BLAS reaches (1 for what is not BLAS's)."""
    bandwidth: Array
    cache: Array
    units: Array
    kernels: Array
    operators: Array
    extra: Array
    """Launches beyond each call's first, from C++."""

    def picked(self, buckets: npt.NDArray[np.bool_], cases: npt.NDArray[np.int64]) -> Fixed:
        """These figures for the buckets ``buckets`` picks, of the cases ``cases`` (ascending)."""
        per_case = ("kernels", "operators", "extra")
        return Fixed(*(v[cases] if name in per_case else v[buckets] for name, v in self._asdict().items()))


def fixed(cols: Columns, figures: Mapping[str, Array]) -> Fixed:
    """``Fixed`` for ``cols`` on the devices ``figures`` describe (``evaluate``'s keyword arguments, by name)."""
    i, n = cols.case, cols.cases
    relaid = cols.convolution & (figures["relayout"][i] > 0)
    launched, called, kept = fused(cols, figures["dispatch"])
    launched = launched + np.where(relaid, RELAYOUT_KERNELS * cols.kernels, 0.0)  # from C++, not Python
    kernels = np.bincount(i, launched, n)
    operators = np.bincount(i, called, n)
    return Fixed(
        launched=launched,
        called=called,
        kept=kept,
        relaid=relaid,
        tiled=figures["tile"][i] > 0,
        eager=figures["eager"][i] > 0,
        blas=np.where(cols.blas, figures["blas_share"][i], 1.0),
        bandwidth=figures["bandwidth"][i],
        cache=figures["cache"][i],
        units=figures["units"][i],
        kernels=kernels,
        operators=operators,
        extra=np.maximum(kernels - operators, 0.0),
    )


def evaluate(
    params: Params,
    cols: Columns,
    known: Fixed | None = None,
    parts: bool = True,
    /,
    *,
    matrix: Array,
    vector: Array,
    bandwidth: Array,
    cache: Array,
    units: Array,
    clock_hz: Array,
    unit_watts: Array,
    blas_share: Array,
    dispatch: Array,
    eager: Array,
    watts: Array,
    traffic: Array,
    relayout: Array,
    training: Array,
    tile: Array,
) -> dict[str, Array]:
    """Per case: seconds per step and its parts. Device arrays are per case; ``dispatch`` is 1 for eager
    dispatch; ``eager`` is 1 where the eager kernel factor and, on a GPU, the eager stream rate apply
    (EAGER_RUNTIME); ``traffic`` is the case's traffic factor (1 for eager PyTorch as profiled);
    ``relayout`` is 1 where a case's convolutions are transposed to NHWC and back (``RELAYOUT_BYTES``);
    ``training`` is 1 where the autograd factor applies (an eager PyTorch training step); ``tile`` is 1
    where the precision runs on a CPU's tile units (the eager tile factors apply); ``known`` is
    ``fixed(cols, ...)`` of the same figures where the caller has it already (a fit evaluates the same
    cases thousands of times with other parameters). Without ``parts``, only the seconds (what a fit
    reads)."""
    i = cols.case
    f = known or fixed(
        cols,
        {
            "dispatch": dispatch,
            "relayout": relayout,
            "tile": tile,
            "eager": eager,
            "blas_share": blas_share,
            "bandwidth": bandwidth,
            "cache": cache,
            "units": units,
        },
    )
    moved = cols.bytes * traffic[i] * np.where(f.relaid, 1.0 + RELAYOUT_BYTES, 1.0)
    flops = np.where(cols.tensor, cols.flops, cols.flops * traffic[i])
    # no unit runs above its peak, whatever a fit says: efficiencies are capped at 1
    efficiency = np.array([params[c] for c in EFFICIENCY_CLASSES])[cols.efficiency]
    factor = np.where(
        cols.convolution,
        np.where(f.tiled, params.conv_on_tiles, params.eager_conv),
        np.where(f.tiled, params.kernel_on_tiles, params.eager_kernel),
    )
    efficiency = np.minimum(1.0, np.where(cols.tensor & f.eager, efficiency * factor, efficiency))
    sustained = sustained_clock(params, clock_hz, unit_watts)
    matrix = np.minimum(matrix * sustained, params["flops_per_w"] * watts)  # no faster than the power allows
    vector = vector * sustained
    peak = np.where(cols.tensor, matrix[i] * f.blas, vector[i])
    if cols.compute_share is not None:
        peak = peak * cols.compute_share
    n = cols.cases
    moved = moved * f.kept
    compute = (flops + f.launched * params["half_work"] * f.units) / (efficiency * peak)
    per_kernel = moved / np.maximum(cols.kernels, 1.0)
    fits = np.minimum(1.0, f.cache / np.maximum(per_kernel, 1.0))
    fed = min(1.0, params["memory"]) * f.bandwidth * (1.0 + params["cache_gain"] * fits)
    if cols.bandwidth_share is not None:
        fed = fed * cols.bandwidth_share
    at_stream = np.zeros(len(i), dtype=bool)
    if params.stream > 0:  # an eager kernel on a GPU streams no faster than its SMs let it
        streamed = params.stream * units * clock_hz * sustained
        at_stream = f.eager & (clock_hz[i] > 0) & (streamed[i] < fed)
        fed = np.where(at_stream, streamed[i], fed)
    memory = moved / fed
    bucket = _smooth_max(compute, memory, SHARPNESS)
    device = np.bincount(i, bucket, n) + f.kernels * params["kernel_s"]
    eager_op = params["dispatch_eager_s"] * np.where(training > 0, params.autograd, 1.0)
    per_op = np.where(dispatch > 0, eager_op, params["dispatch_graph_s"])
    host = f.operators * per_op + f.extra * params["launch_s"] + params["step_s"]
    seconds = combined(host, device, params.kind)
    if not parts:
        return {"seconds": seconds}
    return {
        "seconds": seconds,
        "compute": np.bincount(i, compute, n),
        "memory": np.bincount(i, memory, n),
        "streamed": np.bincount(i, np.where(at_stream, memory, 0.0), n),
        "device": device,
        "host": host,
        "flops": np.bincount(i, flops, n),
        "matrix_flops": np.bincount(i, np.where(cols.tensor, flops, 0.0), n),
        "bytes": np.bincount(i, moved, n),
    }


def scaled(dev: Device, threads: int | None, busy: int | None = None) -> tuple[float, float, float]:
    """A CPU's matrix peak, vector peak and bandwidth for ``threads`` of its cores (all for a GPU),
    while ``busy`` of its cores work in all (``threads`` when not given: the rest idle).

    Compute scales with the cores used, and with their clock: the catalog's peaks are at the base
    clock, which is what every core holds when all are busy within the TDP. Fewer busy cores share
    the same power, and a core's power grows about as the cube of its clock (P ~ f V^2, the voltage
    rising with the clock), so with ``busy`` of ``units`` cores working they run at
    base x (units / busy)^(1/3), up to the part's highest turbo clock. A few cores already draw most of
    the bandwidth (a core streams about a quarter of a socket's channels' worth), so bandwidth scales
    four times faster, up to the share the other busy cores leave, and no faster than ``threads`` cores
    stream on their own (``Device.core_bandwidth``, the architecture's measured core stream:
    app/perfmodel/core_stream.py): a few-core part's cores, all busy, may not draw what its channels
    give (an 8-core Xeon Gold 6434's 8 x 12.9 GB/s against 307)."""
    if dev.kind != "cpu" or not threads or threads >= dev.units:
        return dev.matrix, dev.vector, min(dev.bandwidth, dev.units * dev.core_bandwidth)
    share = threads / dev.units
    working = min(float(busy or threads), dev.units)
    clock = min(dev.turbo, (dev.units / working) ** (1.0 / 3.0))
    bandwidth = min(dev.bandwidth * min(1.0, 4 * share, threads / working), threads * dev.core_bandwidth)
    return dev.matrix * share * clock, dev.vector * share * clock, bandwidth


def figures_of(c: Case) -> dict[str, float]:
    """One case's device figures and factors, as ``evaluate`` takes them (an array of these per case):
    those of one of ``c.streams`` copies of the step running at once, each on ``c.threads`` cores."""
    dev, threads, streams = c.device, c.threads, c.streams
    matrix, vector, bandwidth = scaled(dev, threads, threads * streams if threads else None)
    return {
        "matrix": matrix,
        "vector": vector,
        "bandwidth": bandwidth,
        "cache": dev.cache / streams,
        "units": min(dev.units, threads) if dev.kind == "cpu" and threads else dev.units,
        "clock_hz": dev.clock_hz,
        "blas_share": dev.blas_share if is_pytorch(c.runtime) else 1.0,
        "unit_watts": dev.tdp_w / dev.units if dev.tdp_w else float("inf"),
        "dispatch": 1.0 if dispatch_of(c.runtime) == "eager" else 0.0,
        "eager": 1.0 if is_eager(c.runtime) else 0.0,
        "watts": dev.matrix_watts if dev.kind == "gpu" else float("inf"),
        "traffic": c.traffic,
        "relayout": relayout(c),
        "training": 1.0 if c.profile.task is Task.train and is_eager(c.runtime) else 0.0,
        "tile": 1.0 if on_tiles(dev) else 0.0,
    }


@dataclass(frozen=True, slots=True)
class Case:
    """One step to model: a profile at a batch on a device, run by ``runtime``; on a CPU, ``streams``
    copies of it at once, each on ``threads`` cores (OpenVINO's throughput mode: a stream per core)."""

    profile: Profile
    device: Device
    batch: float
    runtime: str
    threads: int | None = None
    traffic: float = 1.0
    streams: int = 1


def stacked(cases: Sequence[Case]) -> tuple[Columns, dict[str, Array]]:
    """Every case's buckets as one set of columns, and the cases' figures as arrays: what ``evaluate`` takes."""
    coefficients: dict[int, tuple[Array, ...]] = {}
    parts: list[tuple[Array, ...]] = []
    for c in cases:
        k = coefficients.get(id(c.profile))
        if k is None:
            k = coefficients[id(c.profile)] = _coefficients(c.profile)
        parts.append(k)
    batch = np.concatenate([np.full(len(k[0]), c.batch) for c, k in zip(cases, parts, strict=True)])
    stacked = [np.concatenate([k[j] for k in parts]) for j in range(7)]
    cols = Columns(
        case=np.repeat(np.arange(len(cases)), [len(k[0]) for k in parts]),
        flops=stacked[0] * batch + stacked[1],
        bytes=stacked[2] * batch + stacked[3],
        kernels=stacked[4],
        operators=stacked[6],
        tensor=np.concatenate([k[5] for k in parts]).astype(bool),
        efficiency=np.concatenate([k[9] for k in parts]).astype(np.int64),
        convolution=np.concatenate([k[7] for k in parts]).astype(bool),
        blas=np.concatenate([k[8] for k in parts]).astype(bool),
        cases=len(cases),
    )
    few = [few_row_shares(c, k[10]) for c, k in zip(cases, parts, strict=True)]
    if any(f is not None for f in few):
        first = np.concatenate([[0], np.cumsum([len(k[0]) for k in parts])[:-1]]).tolist()
        compute, fed = np.ones(len(cols.case)), np.ones(len(cols.case))
        for start, f in zip(first, few, strict=True):
            for j, (on_compute, on_bandwidth) in f.shares.items() if f else ():
                compute[start + j], fed[start + j] = on_compute, on_bandwidth
        cols = replace(
            cols,
            compute_share=compute,
            bandwidth_share=fed,
            product_threads=[f.threads if f else None for f in few],
        )
    figures = [figures_of(c) for c in cases]
    return cols, {name: np.array([f[name] for f in figures]) for name in figures[0]}


FP32_BYTES = 4.0


def rows_per_sample(bucket: Bucket) -> float:
    """The rows a sample puts through a GEMM bucket's weight products at fp32: its FLOPs per sample over
    twice its weights' elements (what it reads once per step), 1 for a linear layer fed one vector per
    sample (AlexNet's classifier, an MLP), a sequence's tokens for a transformer's. 0 for another class,
    or a bucket that reads no weights (attention's matmuls)."""
    if bucket.op_class is not OpClass.gemm or not bucket.bytes.per_step:
        return 0.0
    return bucket.flops.per_sample / (2.0 * bucket.bytes.per_step / FP32_BYTES)


ROW_PRODUCTS_IN_TRAINING = 2.0 / 3.0
"""The share of a training step's linear-layer work whose rows are the batch: of a layer's three
products of equal FLOPs, the forward and the input gradient (the weight gradient has the layer's outputs
as rows and the batch as its inner dimension). A first layer fed the data has no input gradient (FCN-S's,
45% of its weights), which this share does not follow."""


@lru_cache(maxsize=4096)
def _fewer_threads(
    rows: tuple[float, ...], batch: float, threads: int, training: bool
) -> dict[int, tuple[int, int, int]]:
    """By bucket index, where fewer than ``threads`` or than its products' own: the threads MKL runs the
    products of ``rows`` rows per sample at ``batch`` on, those of them that split the weight matrix's
    columns (``mkl_split.column_threads``: each group of rows reads the whole matrix, so the weights stream
    at those threads' rate; the *weight threads*), and those it runs a training step's weight gradients on
    (``threads``, but one for a batch of one: an outer product, single-threaded as a one-row product is;
    counted by ``benchmarks.linear_rows --gradients``). Cached: a catalog's parts share a few core counts."""
    found = {}
    for j, r in enumerate(rows):
        if not r:
            continue
        row_count = max(1, round(r * batch))
        used = mkl_split.product_threads(row_count, threads)
        columns = mkl_split.column_threads(row_count, threads)
        gradient = 1 if row_count == 1 else threads
        if used < threads or columns < used or (training and gradient < threads):
            found[j] = (used, columns, gradient)
    return found


class FewRows(NamedTuple):
    """Where a case's products run on fewer threads than the case, or read their weights more than once
    (``few_row_shares``)."""

    shares: dict[int, tuple[float, float]]
    """By the bucket's index in its profile: the share of the case's matrix peak its products run at, and
    of the case's bandwidth they draw (buckets not named: 1 and 1)."""
    threads: int | None
    """The fewest threads any of them runs on, where fewer than the case's (None where every product uses
    every thread, and some share their weights' reads between fewer: ``_fewer_threads``)."""


@lru_cache(maxsize=4096)
def _passes(path: str | None, rows: tuple[float, ...], batch: float) -> dict[int, float]:
    """By bucket index, where more than one: the passes over its weights the products of ``rows`` rows per
    sample at ``batch`` make on BLAS path ``path`` in its kernel for few rows (app/perfmodel/weight_passes.py
    ``few_row_passes``). From the matrix kernel on, none: its weights packed once per call are eager
    PyTorch's cost against a graph runtime's (which packs them once, when it loads the model), which the
    eager kernel factor carries for every vendor alike (with the Intel VM's packing modelled and not
    AMD's, which was then unmeasured, the shared factor held out worsened 0.14 -> 0.15 and the Intel VM's
    BERT-base went 1.01x -> 0.89x; with both, session 60, an MLP's batch ratios came closer, 0.13 -> 0.07 on
    the Intel VM and 0.43 -> 0.29 on a Zen 3, but the factor held out worsened 0.14 -> 0.15 again and the
    Intel VM's eager BERT-base over ONNX Runtime's went 0.82 -> 0.73 against 0.86 measured: BERT's 2-9 MB
    weights at a sequence's 128 rows do not show the packing a 67 MB weight showed). Cached as ``_fewer_threads`` is."""
    found = {}
    for j, r in enumerate(rows):
        if r:
            passes = weight_passes.few_row_passes(path, max(1, round(r * batch)))
            if passes != 1.0:
                found[j] = passes
    return found


def few_row_shares(c: Case, rows: Array) -> FewRows | None:
    """Per bucket of ``c``, given its ``rows`` per sample (``rows_per_sample``): the shares of the case's
    matrix peak and bandwidth its products get, or None where every product uses every thread and reads
    its weights once.

    PyTorch hands an fp32 linear layer to MKL, which on an AMD CPU (``Device.mkl_split``) runs a product
    of few rows on a few of the threads it may use (app/perfmodel/mkl_split.py: one row on one thread,
    2-4 rows on one group of its grid's): an inference step at a small batch whose linear layers take
    one row per sample runs them as if the step had those threads alone (``scaled``), while its
    convolutions (oneDNN) use them all. Each group of rows on the grid reads the whole weight matrix, so a
    product's weights stream at its column threads' rate (the *weight threads*) even where every thread
    does its math: two threads, a batch of 8, one group each. A training step's forward and input-gradient
    products take the batch as rows, its weight gradients the layer's outputs, on every thread (one at a
    batch of one): the bucket's work is shared between the two (``ROW_PRODUCTS_IN_TRAINING``). And where
    the CPU's BLAS path has measured *weight passes* (an Intel CPU's MKL: once per three rows to 15; an
    AMD CPU's: once per row to 3), the rows' products read their weights that many times: their bandwidth
    share is divided by the passes (a few-row bucket's bytes are its weights'; ``_passes``). A language
    model's step applies the same grid and passes to its calibrated parts (app/perfmodel/generation.py
    ``product_threads``, ``weight_reads``), so its tasks are not handled here."""
    dev = c.device
    training = c.profile.task is Task.train
    if not ((training or c.profile.task is Task.infer) and is_pytorch(c.runtime)):
        return None
    threads = int(min(c.threads or dev.units, dev.units))
    row_counts = tuple(rows.tolist())
    fewer = _fewer_threads(row_counts, c.batch, threads, training) if dev.mkl_split else {}
    passes = _passes(dev.blas_path, row_counts, c.batch) if dev.blas_path else {}
    if not fewer and not passes:
        return None
    matrix, _vector, bandwidth = scaled(dev, threads, threads * c.streams)

    known: dict[int, tuple[float, float]] = {}  # a case's buckets ask for a few thread counts, many times

    def share(n: int) -> tuple[float, float]:
        if n not in known:
            alone_matrix, _vector, alone_bandwidth = scaled(dev, n)
            known[n] = min(1.0, alone_matrix / matrix), min(1.0, alone_bandwidth / bandwidth)
        return known[n]

    shares, fewest = {}, threads
    for j in sorted({*fewer, *passes}):
        used, columns, gradient = fewer.get(j, (threads, threads, threads))
        # the rows' math on every thread, the weights per group, read as often as the kernel passes over them
        on_rows = (share(used)[0], share(columns)[1] / passes.get(j, 1.0))
        if training:  # the forward and input gradient on the rows' threads, the weight gradient on its own
            on_gradient, f = share(gradient), ROW_PRODUCTS_IN_TRAINING
            on_rows = (
                1.0 / (f / on_rows[0] + (1.0 - f) / on_gradient[0]),
                1.0 / (f / on_rows[1] + (1.0 - f) / on_gradient[1]),
            )
            fewest = min(fewest, gradient)
        shares[j] = on_rows
        fewest = min(fewest, used)
    return FewRows(shares, fewest if fewest < threads else None)


def relayout(c: Case) -> float:
    """1 where the case's convolutions are transposed to channels-last and back (``RELAYOUT_BYTES``):
    eager PyTorch, which keeps PyTorch's channels-first default, on a GPU at 16-bit precision. A
    published stack (NGC's containers run channels-last) and a graph runtime lay the data out once."""
    half = c.profile.precision.value in HALF_PRECISIONS
    return 1.0 if half and c.device.kind == "gpu" and is_eager(c.runtime) else 0.0


def steps(cases: Sequence[Case], params: Params) -> list[Breakdown]:
    """Every case's step, in one array evaluation (all ``cases`` on devices of ``params.kind``)."""
    if not cases:
        return []
    cols, figures = stacked(cases)
    out = evaluate(params, cols, **figures)
    found: list[Breakdown] = []
    for n in range(len(cases)):
        seconds = float(out["seconds"][n])
        compute, memory = float(out["compute"][n]), float(out["memory"][n])
        host, device_s = float(out["host"][n]), float(out["device"][n])
        found.append(
            Breakdown(
                seconds=seconds,
                compute_s=compute,
                memory_s=memory,
                device_s=device_s,
                host_s=host,
                flops=float(out["flops"][n]),
                bytes=float(out["bytes"][n]),
                utilisation_compute=min(1.0, float(out["matrix_flops"][n]) / seconds / figures["matrix"][n]),
                utilisation_memory=min(1.0, float(out["bytes"][n]) / seconds / figures["bandwidth"][n]),
                bound="host" if host > device_s else "compute" if compute >= memory else "memory",
                streamed_s=float(out["streamed"][n]),
                product_threads=cols.product_threads[n] if cols.product_threads else None,
            )
        )
    return found


def _coefficients(profile: Profile) -> tuple[Array, ...]:
    """Per bucket: FLOPs per sample and per step, bytes per sample and per step, kernels, on-matrix-units,
    operators, a convolution, a BLAS class, the index of its efficiency in EFFICIENCY_CLASSES, its
    products' rows per sample (``rows_per_sample``)."""
    b = profile.buckets
    return (
        np.array([x.flops.per_sample for x in b]),
        np.array([x.flops.per_step for x in b]),
        np.array([x.bytes.per_sample for x in b]),
        np.array([x.bytes.per_step for x in b]),
        np.array([x.kernels for x in b], dtype=float),
        np.array([x.op_class in TENSOR_CLASSES for x in b]),
        np.array([x.operators for x in b], dtype=float),
        np.array([x.op_class is OpClass.conv for x in b]),
        np.array([x.op_class in BLAS_CLASSES for x in b]),
        np.array([EFFICIENCY_CLASSES.index(EFFICIENCY_OF.get(x.op_class, "vector")) for x in b]),
        np.array([rows_per_sample(x) for x in b]),
    )


def step(
    profile: Profile,
    dev: Device,
    batch: float,
    params: Params,
    *,
    runtime: str,
    threads: int | None = None,
    traffic: float = 1.0,
    streams: int = 1,
) -> Breakdown:
    """One step of ``profile`` at ``batch`` on ``dev`` (as a published stack does it, given its ``traffic``)."""
    return steps([Case(profile, dev, batch, runtime, threads, traffic, streams)], params)[0]
