"""Eager PyTorch's stream rate on a GPU (app/perfmodel/model.py, ``Params.stream``), measured on the
GPU reference runs where two parts measured the same config.

The H200 has the H100's SMs, clock and power limit with 1.43x its bandwidth (a copy kernel ran 1.41x).
Where both runs measured a config and the model puts both steps on the GPU, the H200 ran 1.07x the
H100 and the model without a stream rate said 1.18x: it gives eager's memory-bound kernels (batch
norms, elementwise operators, casts, layout transposes) the DRAM's rate, and on the H200 those
kernels do not get it. The H200's kernels show why (benchmarks/data/gpu_truth/
h200-2026-11-26-infer-kernels.txt, the profile's bytes of a class over its kernels' time at batch 128
and 256): the batch norms moved 5 (bf16) to 9 (fp32) bytes per SM per clock, 1.4-2.4 TB/s, about 1.2
elements per SM per clock in either precision; the elementwise kernels 14-16.5, 4.3 TB/s, as fast as the
copy kernel, 88% of the DRAM. What bounds the batch norms is the SMs (what a kernel keeps in flight per
SM, or does per element on the way), the same on both parts. One rate for every eager kernel is an
average over such kernels; a rate per class would need the H100's kernels as well as the H200's.

So the stream rate is measured on ratios: per config that two parts of one architecture both measured
(each part's median over its machines) and the model puts on the GPU for both, log(the first part's throughput over
the second's), measured against modelled; the rate is the one value on a grid of 2 to 64 bytes per SM
per clock that makes them agree best (least squares). A ratio does not read the level: the kernels'
efficiencies, which the published fit sets, cancel between two parts that run the same kernels, so
the rate is the one thing the pairs measure. ``benchmarks/reference_check.py`` measures it on the
inference pairs alone and checks it on the training pairs, and the other way round.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from app.perfmodel.bands import regime
from app.perfmodel.model import Case, Params, steps
from app.perfmodel.references import Config, Point

GRID = tuple(float(b) for b in np.exp(np.linspace(math.log(2.0), math.log(64.0), 101)))
"""Bytes per SM per clock: an H100 copy kernel moves about 11, the H200's about 16."""


@dataclass(frozen=True, slots=True)
class Pair:
    """One config two parts measured, both steps on the GPU in the model; ``first`` is the part whose
    catalog id sorts first."""

    config: Config
    first: Case
    second: Case
    measured: float
    """log(the first part's throughput / the second's), each part's median over its machines."""


def with_stream(params: Params, rate: float) -> Params:
    """``params`` with the eager stream rate set to ``rate`` bytes per SM per clock."""
    return replace(params, stream=rate)


def pairs(found: Sequence[Point], params: Params) -> list[Pair]:
    """Every config two parts of one architecture in ``found`` measured where ``params`` puts every
    measured step of both on the GPU, each pair of parts once. A host-bound step's ratio is the hosts',
    not the parts'; two architectures run other kernels, whose efficiencies would not cancel."""
    modelled = steps([p.case for p in found], params)
    by: dict[Config, dict[str, list[tuple[Point, bool]]]] = defaultdict(lambda: defaultdict(list))
    for p, m in zip(found, modelled, strict=True):
        by[p.config][p.case.device.id].append((p, regime(m.host_s, m.device_s) == "device"))
    found_pairs = []
    for config, parts in sorted(by.items(), key=lambda kv: repr(kv[0])):
        for a, b in combinations(sorted(parts), 2):
            architecture = {p.architecture for p, _ in parts[a] + parts[b]}
            if len(architecture) != 1 or None in architecture or not all(on for _, on in parts[a] + parts[b]):
                continue
            first = statistics.median(p.throughput for p, _ in parts[a])
            second = statistics.median(p.throughput for p, _ in parts[b])
            found_pairs.append(Pair(config, parts[a][0][0].case, parts[b][0][0].case, math.log(first / second)))
    return found_pairs


def ratio_errors(chosen: Sequence[Pair], params: Params) -> list[float]:
    """Per pair, log(modelled ratio) - log(measured ratio)."""
    modelled = steps([c for p in chosen for c in (p.first, p.second)], params)
    return [
        math.log(second.seconds / first.seconds) - p.measured
        for p, first, second in zip(chosen, modelled[::2], modelled[1::2], strict=True)
    ]


def fitted(chosen: Sequence[Pair], params: Params) -> float | None:
    """The stream rate on GRID that best fits ``chosen``'s ratios; None with none to fit."""
    if not chosen:
        return None

    def cost(rate: float) -> float:
        return sum(e * e for e in ratio_errors(chosen, with_stream(params, rate)))

    return min(GRID, key=cost)


def measured(found: Sequence[Point], params: Params) -> float | None:
    """The stream rate the pairs of ``found`` measure, with ``params`` choosing which steps are on the
    GPU; None where no two parts measured a config."""
    return fitted(pairs(found, params), params)
