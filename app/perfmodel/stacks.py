"""Runtime stack factors, measured: how many times eager PyTorch's fp32 throughput a runtime (in a
precision) reaches on the same device, for the same workload, batch and threads.

Where one device measured several runtimes side by side, their ratios to its eager fp32 figure say
what each stack (ONNX Runtime's graph optimiser, OpenVINO's oneDNN kernels, XLA, int8 quantisation)
buys there; across devices of a kind the factor is the geometric mean of those ratios, with their
spread. A device that measured only eager fp32 can then be told what another runtime would do on it:
its own measurement times the factor the other devices measured. This is separate from the device
model (app/perfmodel/model.py), whose equations and shipped parameters it leaves alone: it needs no
profile and no catalog entry, so it speaks for lab devices the catalog cannot name (a virtual CPU).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from app.contracts import Precision

BASELINE_RUNTIME = "torch-eager"
BASELINE_PRECISION = Precision.fp32


class Measurement(NamedTuple):
    """One measured config: on which device (any key), of which kind (cpu, cuda), and how fast."""

    device: str
    kind: str
    runtime: str
    precision: Precision
    batch_size: int
    threads: int | None
    throughput: float


@dataclass(frozen=True, slots=True)
class StackFactor:
    runtime: str
    precision: Precision
    kind: str
    factor: float
    """Geometric mean over devices of throughput / eager fp32 throughput at the same batch and threads."""
    spread_pct: float
    """Half the range of the devices' factors, percent of the factor (0 with one device)."""
    devices: tuple[str, ...]
    pairs: int


Baseline = tuple[str, Precision]
EAGER_FP32: Baseline = (BASELINE_RUNTIME, BASELINE_PRECISION)


def ratios(
    measurements: Iterable[Measurement], baseline: Baseline = EAGER_FP32
) -> dict[tuple[str, Precision, str], dict[str, list[float]]]:
    """Each runtime and precision's log ratios to the baseline (eager fp32) per device, at the same
    batch and threads."""
    by_config: dict[tuple[str, str, int, int | None], list[Measurement]] = defaultdict(list)
    for m in measurements:
        if m.throughput > 0:
            by_config[(m.device, m.kind, m.batch_size, m.threads)].append(m)
    found: dict[tuple[str, Precision, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (device, kind, _batch, _threads), group in by_config.items():
        base = [m.throughput for m in group if (m.runtime, m.precision) == baseline]
        if not base:
            continue
        anchor = statistics.median(base)
        for m in group:
            if (m.runtime, m.precision) != baseline:
                found[(m.runtime, m.precision, kind)][device].append(math.log(m.throughput / anchor))
    return found


def stack_factors(
    measurements: Iterable[Measurement], baseline: Baseline = EAGER_FP32
) -> dict[tuple[str, Precision, str], StackFactor]:
    """The factor of every runtime and precision measured beside the baseline (eager fp32) on some
    device, by kind."""
    factors = {}
    for (runtime, precision, kind), per_device in ratios(measurements, baseline).items():
        device_factors = {device: math.exp(sum(logs) / len(logs)) for device, logs in per_device.items()}
        factor = math.exp(sum(math.log(f) for f in device_factors.values()) / len(device_factors))
        spread = (max(device_factors.values()) - min(device_factors.values())) / 2 / factor * 100
        factors[(runtime, precision, kind)] = StackFactor(
            runtime,
            precision,
            kind,
            factor,
            spread,
            tuple(sorted(device_factors)),
            sum(len(logs) for logs in per_device.values()),
        )
    return factors


def without(measurements: Iterable[Measurement], device: str) -> list[Measurement]:
    """The measurements of every device but one: a device's own factor never speaks for itself."""
    return [m for m in measurements if m.device != device]
