"""The lab's own data-parallel runs as evidence for the scaling model.

A data-parallel result (``devices`` > 1, its scaling efficiency measured against one device in the
same run: app/bench/data_parallel.py) says how long its gradient all-reduce really took over that
part's link. Two uses, each said in the answer:

- **The same config measured**: the lab trained this workload at this precision, per-device batch
  and device count on this part; its measured efficiency (the median of its runs) is the answer,
  applied to whatever one device's throughput is.
- **The part's link calibrated**: otherwise the shipped model's communication time (all-reduce
  bytes over the link plus the hops) is multiplied by a **link factor** fitted on the lab's runs
  over the same link (one number, least squares in log space): above 1 the lab's link is slower
  than the model takes it to be (a PCIe switch shared by four boards, no peer-to-peer), below 1
  faster. A link is a part's NVLink or PCIe inside one machine (keyed by the part), or a declared
  cluster's network between machines (keyed by the cluster).

Pure numpy, like app/perfmodel/scaling.py: the database is read in app/recommender.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app.contracts import Precision
from app.perfmodel import scaling

FACTOR_BOUNDS = (1e-3, 1e3)
"""The search range of a link factor: a thousand times faster or slower than the model's link."""


def link_key(link: scaling.Link, *, part: str | None, cluster: str | None = None) -> str:
    """What a link factor is kept under: a declared cluster's network by the cluster, a link inside one
    machine by its kind and the part (every machine of that part has the same NVLink or PCIe)."""
    if cluster is not None:
        return f"cluster:{cluster}"
    return f"{link.kind}:{part}"


@dataclass(frozen=True, slots=True)
class LabRun:
    """One ok data-parallel training result of the lab, as the scaling model sees it."""

    key: str
    """``link_key`` of the link its ring crossed."""
    workload: str
    precision: Precision
    batch: int
    """Per device."""
    devices: int
    throughput: float
    """Samples/s of all devices together."""
    efficiency: float
    """throughput / (devices x one device's throughput, measured in the same run)."""
    gradient_bytes: float
    link_gb_s: float

    @property
    def single_step_s(self) -> float:
        """One device's step, from the run's own one-device baseline."""
        return self.batch * self.devices * self.efficiency / self.throughput


@dataclass(frozen=True, slots=True)
class LinkFactor:
    factor: float
    runs: int


def fit_factor(runs: Sequence[LabRun], params: scaling.ScalingParams) -> float:
    """The link factor minimising the squared log error of ``runs``' throughputs (a grid that zooms in:
    the step's max() makes the loss kinked). 1 where the runs cannot tell (all hidden behind compute)."""
    single = np.array([r.single_step_s for r in runs])
    devices = np.array([float(r.devices) for r in runs])
    gradient = np.array([r.gradient_bytes for r in runs])
    gb_s = np.array([r.link_gb_s for r in runs])
    measured = np.log(np.array([r.throughput for r in runs]))
    batch = np.array([float(r.batch) for r in runs])
    lo, hi = math.log(FACTOR_BOUNDS[0]), math.log(FACTOR_BOUNDS[1])
    best = 0.0
    for _ in range(6):
        grid = np.linspace(lo, hi, 41)[:, None]
        predicted = scaling.data_parallel_throughputs(single, batch, devices, gradient, gb_s, params, np.exp(grid))
        loss = ((np.log(predicted) - measured) ** 2).sum(axis=1)
        tied = np.flatnonzero(loss <= loss.min() * (1 + 1e-9) + 1e-15)
        # a flat loss (every run hidden behind compute) says nothing: keep the factor nearest 1
        best = float(grid[tied[np.argmin(np.abs(grid[tied, 0]))], 0])
        width = (hi - lo) / 40 * 2
        lo, hi = max(math.log(FACTOR_BOUNDS[0]), best - width), min(math.log(FACTOR_BOUNDS[1]), best + width)
    return math.exp(best)


@dataclass(frozen=True, slots=True)
class LabScaling:
    """What the lab's data-parallel runs say, ready for the recommender and the planner."""

    runs: tuple[LabRun, ...] = ()
    factors: dict[str, LinkFactor] = field(default_factory=dict)
    efficiencies: dict[tuple[str, str, Precision, int, int], tuple[float, int]] = field(default_factory=dict)
    """(link key, workload, precision, per-device batch, devices) -> (median efficiency, runs)."""

    @classmethod
    def of(cls, runs: Sequence[LabRun], params: scaling.ScalingParams) -> LabScaling:
        by_link: dict[str, list[LabRun]] = defaultdict(list)
        by_config: dict[tuple[str, str, Precision, int, int], list[float]] = defaultdict(list)
        for run in runs:
            by_link[run.key].append(run)
            by_config[(run.key, run.workload, run.precision, run.batch, run.devices)].append(run.efficiency)
        return cls(
            runs=tuple(runs),
            factors={key: LinkFactor(fit_factor(found, params), len(found)) for key, found in by_link.items()},
            efficiencies={key: (statistics.median(found), len(found)) for key, found in by_config.items()},
        )

    def factor(self, key: str) -> LinkFactor | None:
        return self.factors.get(key)

    def measured(
        self, key: str, workload: str, precision: Precision, batch: int, devices: int
    ) -> tuple[float, int] | None:
        """The lab's median efficiency of exactly this config, and how many runs it is the median of."""
        return self.efficiencies.get((key, workload, precision, batch, devices))

    def measured_at(self, workload: str, precision: Precision, batch: int) -> dict[tuple[str, int], tuple[float, int]]:
        """Every device count the lab measured this config at, by link key and count: (median efficiency, runs)."""
        return {
            (key, devices): found
            for (key, w, p, b, devices), found in self.efficiencies.items()
            if (w, p, b) == (workload, precision, batch)
        }

    def words(self) -> list[str]:
        """One line per calibrated link, for an answer's notes."""
        return [
            f"the lab's {found.runs} data-parallel run(s) over {key.replace(':', ' ', 1)} calibrate its "
            f"all-reduce time: x{found.factor:.2g} the scaling model's"
            for key, found in sorted(self.factors.items())
        ]


EMPTY = LabScaling()
