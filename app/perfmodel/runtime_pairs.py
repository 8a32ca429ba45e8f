"""The eager kernel factor: eager PyTorch's matrix kernels against a graph runtime's on the same CPU.

The CPU class efficiencies are set by OpenVINO's published runs, a graph runtime. Eager PyTorch runs the
same networks slower on the same cores: each convolution is a oneDNN primitive called on PyTorch's plain
layout (its input, output and weights reordered to oneDNN's blocked layout and back on every call) and
each linear layer an MKL GEMM that packs its weights on every call, where ONNX Runtime and OpenVINO keep
the blocked layout across the graph and pack the weights once. The model without a factor had eager
PyTorch at 0.9-1.0 of ONNX Runtime on ResNet-50 (its fusion and dispatch alone); this project's lab CPUs
measured 0.4-0.7.

The two costs differ, and so do the ratios: the six lab CPUs measured 0.39-0.72 on ResNet-50 (its
matrix work all convolutions) and 0.44-1.07 on BERT and the LSTM (all GEMMs), the convolutions lower on
five of the six. So there are two factors, ``FACTORS``: one for convolutions (``Params.eager_conv``),
one for the GEMMs of linear layers, attention and recurrent cells (``Params.eager_kernel``), each pair
measuring the one whose class does most of its matrix FLOPs (``group``).

The lowest GEMM ratios, the Zen 5 VM's (0.44 and 0.50), are mostly not a per-call cost: MKL runs its AVX2
kernels on AMD CPUs, half of Zen 5's AVX-512 rate, where ONNX Runtime's own kernels use the whole width.
The model has that as ``Device.blas_share`` (app/perfmodel/device.py), so the ratio it predicts for those
pairs is already about half before any factor, and the factor they need is what is left.

Where the precision runs on a CPU's tile units (AMX's bf16 and int8), the same two costs are paid on
another unit, and eager PyTorch reaches a far smaller share of its peak: an Emerald Rapids VM with AMX
ran eager bf16 at 0.17 of OpenVINO's bf16 on ResNet-50 and 0.30-0.52 on BERT-base, where the model
without a factor of its own put 0.4-0.7. So a pair on tiles measures a tile factor of its class
(``conv-tile``, ``gemm-tile``), and only such a pair does. Such a pair is not a figure of the lab level
(app/perfmodel/lab_levels.py), which the vector units' figures set.

A pair whose ratio no factor on ``GRID`` reaches measures something else than its matrix kernels, and
sets no factor (``needed`` gives None; ``unreached`` names it). The LSTM at bf16 on both AMX VMs (eager /
OpenVINO 0.026 and 0.042, where the model's ratio at the grid's least factor is 0.10-0.14) is one: under
autocast its decoder's linear layer, fed the LSTM's non-contiguous output, goes to a batched matmul over
a weight expanded and copied per sequence (``aten::copy_`` 117 of 139 ms of a step at batch 16, PyTorch's
profiler, session 47), while its oneDNN LSTM layers take 2.6 ms. Clipped to the grid's end it had pulled
the GEMMs' tile factor down with a value it does not have.

A lab machine that ran the same config under both runtimes gives the measured ratio eager / graph. Its
catalog identity is uncertain (a 2-vCPU slice of some part of its generation), but a ratio on one
machine does not depend on it: ``needed`` finds the factor that makes the model's ratio, the median over
the generation's catalog parts, equal the measured one; ``factors`` is, per group, the geometric median
over its pairs (app/perfmodel/data/cpu_runtime_pairs.json); ``leave_one_machine_out`` measures how well
the factors from the other machines predict each machine's ratios (benchmarks/accuracy.py prints it).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from importlib import resources

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt

from app.catalog import CatalogHardware
from app.contracts import OpClass, Precision, Task
from app.perfmodel.device import device, runs_on_tiles
from app.perfmodel.model import EAGER_RUNTIME, Case, Params, evaluate, stacked
from app.perfmodel.profile import TENSOR_CLASSES, Profile
from app.perfmodel.profile import shipped as profiles

FACTORS = ("conv", "gemm", "conv-tile", "gemm-tile")
"""The eager kernel factors, by the matrix work whose cost they are: convolutions (plain layout reordered
on every call: ``Params.eager_conv``), GEMMs (weights packed on every call: ``Params.eager_kernel``); and
the same two where the precision runs on a CPU's tile units (AMX: ``Params.eager_conv_tile``,
``Params.eager_kernel_tile``), whose share of the peak eager PyTorch reaches is another."""

GRID = np.exp(np.linspace(math.log(0.05), math.log(2.0), 61))
"""The factors ``needed`` tries: the model's ratio is monotone in the factor, so the measured one is
found by interpolating on this grid. A ratio outside what its ends give is not the factor's to explain."""


class Pair(BaseModel):
    """One config measured under eager PyTorch and under a graph runtime on the same machine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str
    task: Task
    precision: Precision
    batch: PositiveInt
    threads: PositiveInt
    eager: PositiveFloat = Field(description="torch-eager samples/s.")
    graph_runtime: str = Field(description="The graph runtime it was measured against (onnxruntime-cpu).")
    graph: PositiveFloat = Field(description="The graph runtime's samples/s.")

    @property
    def ratio(self) -> float:
        return self.eager / self.graph


class Machine(BaseModel):
    """A lab CPU and the catalog parts it may be: those of its CPUID's generation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    cpu: str = Field(description="What the machine reported.")
    architectures: list[str] = Field(min_length=1, description="The catalog architectures of its generation.")
    names: str = Field(description="A regular expression the catalog parts' names match (server parts).")
    measured: str = Field(description="When and how.")
    pairs: list[Pair] = Field(min_length=1)

    def parts(self, catalog: Sequence[CatalogHardware]) -> list[CatalogHardware]:
        return [
            h
            for h in catalog
            if h.kind == "cpu" and h.architecture in self.architectures and re.search(self.names, h.name)
        ]


class Pairs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str
    machines: list[Machine]


@lru_cache(maxsize=1)
def shipped() -> Pairs:
    path = resources.files("app.perfmodel").joinpath("data/cpu_runtime_pairs.json")
    return Pairs.model_validate(json.loads(path.read_text(encoding="utf-8")))


def profile_of_pair(pair: Pair) -> Profile | None:
    return profiles().get((pair.workload, pair.task, pair.precision))


def on_tiles(pair: Pair, parts: Sequence[CatalogHardware]) -> bool:
    """Whether ``pair``'s precision runs on the tile units of the parts its machine may be (AMX)."""
    return runs_on_tiles(parts, pair.precision)


def group(pair: Pair, parts: Sequence[CatalogHardware]) -> str | None:
    """The factor (a key of ``FACTORS``) ``pair`` measures on a machine that may be any of ``parts``: that of
    the class doing most of its matrix FLOPs, on the units its precision runs on; None when the model has
    no profile for it or the profile no matrix work."""
    profile = profile_of_pair(pair)
    if profile is None:
        return None
    flops = {"conv": 0.0, "gemm": 0.0}
    for b in profile.buckets:
        if b.op_class in TENSOR_CLASSES:
            flops["conv" if b.op_class is OpClass.conv else "gemm"] += b.flops.at(pair.batch)
    if not any(flops.values()):
        return None
    most = max(flops, key=lambda name: flops[name])
    return f"{most}-tile" if on_tiles(pair, parts) else most


def with_factors(params: Params, factors: Mapping[str, float]) -> Params:
    """``params`` with the eager kernel factors ``factors`` (keys of ``FACTORS``) set."""
    return replace(
        params,
        eager_conv=float(factors.get("conv", params.eager_conv)),
        eager_kernel=float(factors.get("gemm", params.eager_kernel)),
        eager_conv_tile=_factor(factors, "conv-tile", params.eager_conv_tile),
        eager_kernel_tile=_factor(factors, "gemm-tile", params.eager_kernel_tile),
    )


def _factor(factors: Mapping[str, float], name: str, otherwise: float | None) -> float | None:
    found = factors.get(name)
    return otherwise if found is None else float(found)


def modelled_ratios(
    pair: Pair, parts: Sequence[CatalogHardware], params: Params, factors: Sequence[float]
) -> list[float]:
    """The model's eager / graph throughput ratio for ``pair`` at each value of the factor it measures
    (``group``), the other as in ``params``: the median over ``parts``."""
    profile, measures = profile_of_pair(pair), group(pair, parts)
    devices = [d for part in parts if (d := device(part, pair.precision)) is not None]
    if profile is None or measures is None or not devices:
        return []
    cases = [
        Case(profile, dev, pair.batch, runtime, pair.threads)
        for dev in devices
        for runtime in (EAGER_RUNTIME, pair.graph_runtime)
    ]
    cols, figures = stacked(cases)  # the same steps at every factor: stacked once
    found = []
    for f in factors:
        seconds = evaluate(with_factors(params, {measures: f}), cols, **figures)["seconds"]
        # the ratio of throughputs is graph seconds over eager seconds
        found.append(float(np.median(seconds[1::2] / seconds[0::2])))
    return found


def needed(pair: Pair, parts: Sequence[CatalogHardware], params: Params) -> float | None:
    """The eager kernel factor at which the model's ratio for ``pair`` is the measured one; None when the
    model cannot price the pair (no profile, no part) or no factor on ``GRID`` gives its ratio
    (``unreached``)."""
    ratios = modelled_ratios(pair, parts, params, GRID.tolist())
    if not ratios:
        return None
    logs = np.log(np.array(ratios))  # increasing in the factor: a faster eager kernel, a higher ratio
    steps_up = np.diff(logs)
    if logs[-1] <= logs[0] or np.any(steps_up < 0):  # no matrix work the factor reaches
        return None
    measured = math.log(pair.ratio)
    if not logs[0] <= measured <= logs[-1]:
        return None
    rising = np.concatenate([[True], steps_up > 0])  # past an efficiency's cap of 1 the ratio is flat
    return float(math.exp(np.interp(measured, logs[rising], np.log(GRID)[rising])))


def unreached(pair: Pair, parts: Sequence[CatalogHardware], params: Params) -> tuple[float, float] | None:
    """The model's ratios for ``pair`` at ``GRID``'s ends where the measured ratio lies outside them (no
    factor explains it, and it sets none, as ``needed`` says); None where one does, or where the model
    cannot price the pair."""
    ratios = modelled_ratios(pair, parts, params, [float(GRID[0]), float(GRID[-1])])
    if not ratios:
        return None
    low, high = ratios
    return (low, high) if low < high and not low <= pair.ratio <= high else None


def _needed_logs(
    machines: Sequence[Machine], catalog: Sequence[CatalogHardware], params: Params
) -> dict[str, dict[str, list[float]]]:
    """Per machine and factor, the log of the factor each of its pairs needs (the pairs the model prices)."""
    found: dict[str, dict[str, list[float]]] = {}
    for m in machines:
        logs: dict[str, list[float]] = {name: [] for name in FACTORS}
        parts = m.parts(catalog)
        for pair in m.pairs:
            measures, f = group(pair, parts), needed(pair, parts, params)
            if measures is not None and f is not None:
                logs[measures].append(math.log(f))
        found[m.name] = logs
    return found


def _geometric_medians(per_machine: Sequence[dict[str, list[float]]]) -> dict[str, float]:
    """Per factor, the geometric median of the machines' needed factors; a factor no pair measured is absent."""
    found = {}
    for name in FACTORS:
        logs = [x for machine in per_machine for x in machine[name]]
        if logs:
            found[name] = math.exp(statistics.median(logs))
    return found


def factors(machines: Sequence[Machine], catalog: Sequence[CatalogHardware], params: Params) -> dict[str, float]:
    """Per factor (a key of ``FACTORS``), the geometric median of what its pairs need; a factor without a
    pair the model prices is absent."""
    return _geometric_medians(list(_needed_logs(machines, catalog, params).values()))


def leave_one_machine_out(
    machines: Sequence[Machine], catalog: Sequence[CatalogHardware], params: Params, *, pooled: bool = False
) -> list[tuple[str, Pair, float, float]]:
    """(machine, pair, the model's ratio with the factors from the other machines, with none) per pair.
    ``pooled``: one factor for both classes (of a unit), the median over every other pair (the form before
    there were two), to compare with."""
    logs = _needed_logs(machines, catalog, params)  # each pair's once, not once per machine it is left in
    if pooled:
        logs = {
            name: {
                f: [x for g, xs in found.items() if g.endswith("-tile") == f.endswith("-tile") for x in xs]
                for f in FACTORS
            }
            for name, found in logs.items()
        }
    bare = with_factors(params, dict.fromkeys(FACTORS, 1.0))
    rows = []
    for m in machines:
        others = _geometric_medians([found for name, found in logs.items() if name != m.name])
        parts = m.parts(catalog)
        for pair in m.pairs:
            measures = group(pair, parts)
            if measures is None or measures not in others:
                continue
            held = modelled_ratios(pair, parts, with_factors(params, others), [others[measures]])
            without = modelled_ratios(pair, parts, bare, [1.0])
            if held and without:
                rows.append((m.name, pair, held[0], without[0]))
    return rows
