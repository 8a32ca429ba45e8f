"""What every estimator shares: the config estimated, the evidence indexed for it, the registry,
and ``estimate``, which tries the estimators in their ``order`` (their EstimatorInfo).

An estimator later in the order runs only when the ones before it had nothing, so a measurement is
never replaced by an interpolation or a prediction.
"""

from __future__ import annotations

import functools
import math
import statistics
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from app.contracts import DeviceKind, PowerBasis, Precision, Task
from app.perfmodel.predict import profile_of
from app.perfmodel.references import far
from app.perfmodel.split import Split, Timed
from app.recommender.evidence import LAB, Hardware, Point, by_batch
from app.recommender.guess import Guess
from app.registry import PluginInfo, Registry


@dataclass(frozen=True, slots=True)
class Config:
    runtime: str
    precision: Precision
    batch_size: int
    threads: int | None
    source: str = LAB
    variant: str | None = None
    """The model variant (app/bench/variants); None is the original model."""


Correction = tuple[str, Precision, DeviceKind, str | None]
"""A lab correction's key: runtime, precision, kind of device and vendor (modelled.lab_correction)."""


@dataclass(slots=True)
class Ratios:
    """One device's measured / modelled ratios (modelled.lab_correction): its label, its source (the
    lab's or a reference run's), its catalog part and kind, the hardware and threads it ran on, (batch,
    log ratio) per point and the steps behind them, on which its part's split correction is fitted
    (app/perfmodel/split.py) when another part asks."""

    label: str
    source: str
    part: str
    kind: str
    hardware: Hardware
    threads: int | None
    unit: str | None = None
    """A CPU's matrix unit at the precision (app/perfmodel/device.py ``matrix_unit``)."""
    points: list[tuple[int, float]] = field(default_factory=list)
    timed: list[Timed] = field(default_factory=list)
    systems: dict[int, int] = field(default_factory=dict)
    """Per batch, how many systems its point there stands for (a reference part's point is the median of
    its runs'; a lab device's, one)."""

    def systems_near(self, batch: int | None) -> int:
        """The systems behind its point nearest ``batch`` (in log batch), the one a ratio carried beyond
        its batches is read at (``references.at_batch``)."""
        if batch is None or not self.systems:
            return 1
        return self.systems[min(self.systems, key=lambda b: (abs(math.log(b / batch)), b))]


class LabCorrection(NamedTuple):
    """The lab's measured / modelled ratio for a config (modelled.lab_correction) and the devices it
    stands on."""

    factor: float
    references: tuple[str, ...]
    between: bool | None = None
    """Where the target part's own reference run alone calibrated it: whether the batch lay strictly
    between batches the run measured (its band is then ``gpu-between``, leave-one-batch-out) or beyond
    them; None where other devices took part (the ``gpu-transfer`` band)."""
    reach: float = 0.0
    """How far the ratio was carried: |log(batch / the nearest batch measured)| outside the batches the
    devices measured, 0 at or between them (``references.reach``)."""
    own: bool = False
    """Whether a device of the asked part itself measured the config (at any batch): its own figures, not
    ratios carried from other parts."""
    systems: int = 1
    """How many systems stand behind the devices' points nearest the batch (``Ratios.systems_near``)."""

    @property
    def beyond(self) -> bool:
        """Whether the batch lay more than ``references.BEYOND_NEAR`` times beyond every batch the devices it
        stands on measured (its band is then at least ``gpu-beyond``: their nearest ratio, carried that far)."""
        return far(self.reach)


class Moving(NamedTuple):
    """One group of calibrating devices (one source, part and thread count) as a ratio carried to another
    part moves (modelled.lab_correction): its part, its share of the devices, its split correction and
    that split's ratio at the group's own modelled step at the batch."""

    part: str
    share: float
    split: Split
    at_own: float


class Calibrating(NamedTuple):
    """The devices chosen to calibrate a part at one batch: their correction unmoved, and how it moves."""

    correction: LabCorrection
    moving: tuple[Moving, ...]


@dataclass(slots=True)
class RatiosAt:
    """Every device's log ratio at one batch (modelled._ratios_at), the parts a reference run measured,
    and the devices chosen for each part asked (its run alone beside the lab's devices) or for any."""

    ratios: list[tuple[Ratios, float]]
    parts: set[str]
    """Every part a device of them is (lab's and reference runs')."""
    reference_parts: set[str]
    made: dict[tuple[str | None, str | None], Calibrating | None]
    """Per part asked (None: any) and matrix unit."""


@dataclass(slots=True)
class Evidence:
    """The points of one workload, indexed for the estimators."""

    points: list[Point]
    workload: str = ""
    task: Task = Task.infer
    variant: str | None = None
    """The model variant all these points measured (None: the original). The profiles are the
    original models', so a variant is never modelled from one: only measured, interpolated along its
    own curve, or transferred from other parts that measured it."""
    # A prediction depends only on the config and the target's part: a fleet of many machines with
    # the same GPU shares one (the leave-one-out behind its band is the costly step).
    predictions: dict[tuple[Config, str, DeviceKind], Guess | None] = field(default_factory=dict)
    by_config: dict[tuple[str, str, Precision], list[Point]] = field(default_factory=dict)
    references: dict[tuple[Config, DeviceKind], list[Point]] = field(default_factory=dict)
    curves: dict[tuple[str, str, str, Precision], list[Point]] = field(default_factory=dict)
    measured_keys: set[str] = field(default_factory=set)
    exact: dict[tuple[str, str, str, Precision, int | None, int | None], list[Point]] = field(default_factory=dict)
    corrections: dict[Correction, dict[str, Ratios]] = field(default_factory=dict)
    """Per device that measured a runtime and precision, its measured / modelled ratios by batch
    (app/recommender/estimators/modelled.py, ``lab_correction``)."""
    ratios_at: dict[tuple[str, Precision, DeviceKind, str | None, int | None], RatiosAt] = field(default_factory=dict)
    """Each device's log ratio at a batch, and the corrections made of them (``modelled.lab_correction``)."""
    splits: dict[tuple[Correction, str, str, int | None], Split] = field(default_factory=dict)
    """Each group of devices' split correction: per lab correction's key, source, part and threads."""
    stacks: dict[str, Any] = field(default_factory=dict)
    """Runtime stack factors measured on the devices other than each one (app/recommender/estimators/stacked.py)."""
    sources: set[str] = field(default_factory=set)
    """Every source a point came from (the lab, each reference run, each published source)."""

    def __post_init__(self) -> None:
        owners: dict[str, tuple[str, ...]] = {}
        for p in self.points:
            self.sources.add(p.source)
            self.by_config.setdefault((p.source, p.runtime, p.precision), []).append(p)
            key = p.hardware.key
            if key not in owners:
                self.measured_keys.add(key)
                spec = p.hardware.spec
                owners[key] = (key, f"part:{spec.id}") if spec is not None else (key,)
            batch = p.batch_size if by_batch(p.source) else None  # published results: at the source's batch
            for owner in owners[key]:
                self.curves.setdefault((owner, p.source, p.runtime, p.precision), []).append(p)
                self.exact.setdefault((owner, p.source, p.runtime, p.precision, batch, p.threads), []).append(p)

    @staticmethod
    def _owner(hardware: Hardware) -> str | None:
        """A lab device's points are its own; a catalog part's are those of every device of that part."""
        if hardware.ref.owned:
            return hardware.key
        return f"part:{hardware.spec.id}" if hardware.spec is not None else None

    def at(self, hardware: Hardware, config: Config) -> list[Point]:
        """The points of exactly this config on this hardware."""
        batch = config.batch_size if by_batch(config.source) else None
        key = (self._owner(hardware) or "", config.source, config.runtime, config.precision, batch, config.threads)
        return self.exact.get(key, [])

    def ran(self, hardware: Hardware, config: Config) -> bool:
        """Whether the hardware itself measured this config's runtime and precision (at any batch)."""
        return bool(self.curve(hardware, config.source, config.runtime, config.precision))

    def measured_on(self, hardware: Hardware) -> bool:
        return hardware.key in self.measured_keys

    def curve(self, hardware: Hardware, source: str, runtime: str, precision: Precision) -> list[Point]:
        """Every point this hardware measured with this runtime and precision (all batches and threads)."""
        return self.curves.get((self._owner(hardware) or "", source, runtime, precision), [])


def median(values: list[float]) -> float:
    """statistics.median, without its overhead for the usual single value (this runs per config of every device)."""
    return values[0] if len(values) == 1 else statistics.median(values)


def tdp_power(hardware: Hardware) -> tuple[float | None, PowerBasis | None]:
    if hardware.spec is not None and hardware.spec.tdp_w:
        return hardware.spec.tdp_w, PowerBasis.tdp
    return None, None


def held_gb(hardware: Hardware, config: Config, evidence: Evidence) -> float | None:
    """What a config that ran holds in device memory, from the workload's profile (weights and activations;
    in training, gradients and optimiser state too), so a measured figure states it as a modelled one does.
    None for a model variant or a workload with no profile, and where the profile says more than the part
    has: the config ran there, so the profile overstates it, and a measured figure is never rejected for
    memory it did not need."""
    if not evidence.workload or config.variant is not None:
        return None
    needed = _profiled_gb(evidence.workload, evidence.task, config.precision, config.batch_size)
    spec = hardware.spec
    return None if needed is None or (spec is not None and spec.memory_gb and needed > spec.memory_gb) else needed


@functools.lru_cache(maxsize=4096)
def _profiled_gb(workload: str, task: Task, precision: Precision, batch: int) -> float | None:
    """The profile's memory at a batch, once per config: a fleet's table asks it of every measured point."""
    profile = profile_of(workload, task, precision)
    return profile.memory.at(batch) / 1e9 if profile is not None else None


def batch_time_ms(config: Config, throughput: float) -> float:
    return config.batch_size / throughput * 1000


def config_at(point: Point) -> Config:
    return Config(point.runtime, point.precision, point.batch_size, point.threads, point.source)


class Estimator(ABC):
    """One way to estimate a config on a piece of hardware; ``info.order`` says when it is tried."""

    info: ClassVar[EstimatorInfo]

    @staticmethod
    @abstractmethod
    def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
        """The estimate, or None when this estimator has nothing to go on."""

    @staticmethod
    def prepare(pairs: Sequence[tuple[Hardware, Config]], evidence: Evidence) -> None:
        """Work shared by every pair a table will ``estimate``, done once for all (nothing by default)."""
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class EstimatorInfo(PluginInfo):
    order: int
    """Tried in this order, lowest first; a later one runs only where the earlier ones had nothing."""

    def details(self) -> dict[str, Any]:
        return {"order": self.order}


estimators: Registry[type[Estimator]] = Registry("estimator", package="app.recommender.estimators")
_ordered: list[type[Estimator]] = []


def ordered() -> list[type[Estimator]]:
    """The estimators by their order, lowest first (read once: ``estimate`` runs per config per device)."""
    if not _ordered:
        _ordered.extend(sorted((e.plugin for e in estimators), key=lambda p: p.info.order))
    return _ordered


def estimate_all(pairs: Sequence[tuple[Hardware, Config]], evidence: Evidence) -> list[Guess | None]:
    """``estimate`` for every pair, estimator by estimator: each is prepared for (and tried on) only
    the pairs the ones before it had nothing for, so a model primes no pair a measurement answers."""
    found: list[Guess | None] = [None] * len(pairs)
    remaining = list(range(len(pairs)))
    for estimator in ordered():
        if not remaining:
            break
        estimator.prepare([pairs[i] for i in remaining], evidence)
        left = []
        for i in remaining:
            hardware, config = pairs[i]
            guess = estimator.estimate(hardware, config, evidence)
            if guess is None:
                left.append(i)
            found[i] = guess
        remaining = left
    return found


def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    """The first estimator's estimate that has one, in their order (``estimate_all`` for one pair)."""
    return estimate_all([(hardware, config)], evidence)[0]
