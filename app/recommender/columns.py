"""Every option of one ask's table as columns: the figures ranking reads, one numpy array each, so
that an answer over the whole catalog and a large fleet is array arithmetic; only the rows an answer
lists are made into wire models again (from ``options``, which keeps each row's estimate).

Unknown figures (no power, no latency, no price) are NaN in the columns; row i of every column is
``options[i]``, in the order the options were made (the order ties keep when ranked).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from app.catalog.price import price_of
from app.contracts import DeviceKind, EstimateKind, Precision, Price
from app.perfmodel.lab_scaling import EMPTY, LabScaling
from app.recommender.estimators import Config
from app.recommender.evidence import Hardware
from app.recommender.guess import Guess
from app.recommender.power import power_range

KIND_ORDER = {EstimateKind.measured: 2, EstimateKind.interpolated: 1, EstimateKind.predicted: 0}
"""Ties rank measured before interpolated before predicted."""


class Option(NamedTuple):
    """One hardware x config with its estimate (a tuple: there are tens of thousands per table)."""

    hardware: Hardware
    config: Config
    estimate: Guess


Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
NAN = float("nan")


def _floats(values: list[float | None]) -> Floats:
    return np.array([NAN if v is None else v for v in values], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Columns:
    options: list[Option]
    hardware: list[Hardware]
    """Each distinct hardware of the options, indexed by ``hardware_index``."""
    prices: list[Price | None]
    """Each hardware's price by the catalog's one rule (app/catalog/price.py), None where it has none."""
    runtimes: list[str]
    variants: list[str | None]
    """Each distinct variant of the options (None: the original model), indexed by ``variant_index``."""
    hardware_index: Ints
    runtime_index: Ints
    variant_index: Ints
    precision_index: Ints
    """Into ``PRECISIONS``."""
    throughput: Floats
    error_pct: Floats
    """Per row: the estimate's band, percent (``Guess.error_pct``)."""
    power_w: Floats
    latency_p99_ms: Floats
    memory_gb: Floats
    kind_order: Ints
    price_usd: Floats
    """Per row: its hardware's price in dollars."""
    device_memory_gb: Floats
    """Per row: the GPU's memory when the catalog knows it (what ``out_of_memory`` compares with)."""
    cap_min_w: Floats
    cap_max_w: Floats
    """Per row: the power-limit range a GPU may be capped in (app/recommender/power.py), NaN if none."""
    lab_scaling: LabScaling = EMPTY
    """What the lab's data-parallel runs say of the links (training tables only)."""

    def __len__(self) -> int:
        return len(self.options)

    def allowed(
        self,
        precisions: list[Precision] | None,
        runtimes: list[str] | None,
        variants: list[str] | None = None,
        *,
        allow_variants: bool = False,
        device_kinds: list[DeviceKind] | None = None,
    ) -> npt.NDArray[np.bool_]:
        """The rows the ask's precision, runtime, device-kind and variant filters keep: the original
        model's, and a variant's only where the ask allows variants (and names it, when it names any)."""
        wanted_variants = [
            i
            for i, v in enumerate(self.variants)
            if v is None or (allow_variants and (variants is None or v in variants))
        ]
        keep = np.isin(self.variant_index, wanted_variants)
        if precisions is not None:
            wanted = [i for i, p in enumerate(PRECISIONS) if p in precisions]
            keep &= np.isin(self.precision_index, wanted)
        if runtimes is not None:
            wanted = [i for i, r in enumerate(self.runtimes) if r in runtimes]
            keep &= np.isin(self.runtime_index, wanted)
        if device_kinds is not None:
            wanted = [i for i, h in enumerate(self.hardware) if h.ref.kind in device_kinds]
            keep &= np.isin(self.hardware_index, wanted)
        return keep


PRECISIONS = list(Precision)


def columns(options: list[Option], lab_scaling: LabScaling = EMPTY) -> Columns:
    """The options' figures as columns (once per table: the table is cached across asks)."""
    hardware: dict[str, int] = {}
    runtimes: dict[str, int] = {}
    variants: dict[str | None, int] = {None: 0}
    precisions = {p: i for i, p in enumerate(PRECISIONS)}
    parts: list[Hardware] = []
    for option in options:
        if option.hardware.key not in hardware:
            hardware[option.hardware.key] = len(parts)
            parts.append(option.hardware)
        runtimes.setdefault(option.config.runtime, len(runtimes))
        variants.setdefault(option.config.variant, len(variants))
    prices = [price_of(h.spec) for h in parts]
    per_part_memory = [
        h.spec.memory_gb if h.spec is not None and h.spec.kind == "gpu" and h.spec.memory_gb else None for h in parts
    ]
    ranges = [power_range(h) for h in parts]
    index = np.array([hardware[o.hardware.key] for o in options], dtype=np.int64)
    estimates = [o.estimate for o in options]
    return Columns(
        options=options,
        hardware=parts,
        prices=prices,
        runtimes=list(runtimes),
        variants=list(variants),
        hardware_index=index,
        runtime_index=np.array([runtimes[o.config.runtime] for o in options], dtype=np.int64),
        variant_index=np.array([variants[o.config.variant] for o in options], dtype=np.int64),
        precision_index=np.array([precisions[o.config.precision] for o in options], dtype=np.int64),
        throughput=np.array([e.throughput_samples_per_s for e in estimates], dtype=np.float64),
        error_pct=np.array([e.error_pct for e in estimates], dtype=np.float64),
        power_w=_floats([e.power_w for e in estimates]),
        latency_p99_ms=_floats([e.latency_p99_ms for e in estimates]),
        memory_gb=_floats([e.memory_gb for e in estimates]),
        kind_order=np.array([KIND_ORDER[e.kind] for e in estimates], dtype=np.int64),
        price_usd=_floats([p.usd if p is not None else None for p in prices])[index],
        device_memory_gb=_floats(per_part_memory)[index],
        cap_min_w=_floats([r[0] if r else None for r in ranges])[index],
        cap_max_w=_floats([r[1] if r else None for r in ranges])[index],
        lab_scaling=lab_scaling,
    )
