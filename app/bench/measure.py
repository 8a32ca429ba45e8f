"""The harness: time a step, warm it up until steady, sample until the median is known well enough.

It knows nothing of models. A runtime hands it a ``step`` (one mini-batch) and, on a GPU, a
``sync`` that waits for queued work; the harness owns warm-up, repetition and statistics.

Stopping rule (Phoronix's dynamic run count, with its users' complaints fixed): sample until the
95% confidence interval of the *median* (distribution-free, from order statistics) is within
``target_ci`` of the median, or the time budget or iteration cap is spent; the result says
``stable`` only in the first case. A fixed iteration count is obeyed exactly. The garbage
collector is off while timing.

A GPU has two more rules (``for_device``): it warms up for at least GPU_WARMUP_MIN_S and samples for
at least GPU_SAMPLING_MIN_S. Steps that agree with each other say nothing of the clock: on an H200 a
bf16 GEMM ran 19% faster over its first tens of milliseconds than once its 700 W cap had pulled the SM
clock from 1,980 to about 1,470 MHz, a quarter of a second in; and NVML's energy counter steps every
100 ms there, so a region of a few milliseconds read 0 J or a whole step (docs/PERFORMANCE.md, "GPU
truth"; benchmarks/gpu_clocks.py shows both).
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

from app.contracts import MeasureSpec

Z95 = 1.959963984540054
GPU_WARMUP_MIN_S = 1.0
GPU_SAMPLING_MIN_S = 1.0


@dataclass(frozen=True, slots=True)
class Timing:
    """Step times in seconds with their statistics; derive everything from the raw samples."""

    samples_s: tuple[float, ...]
    warmup_iterations: int
    stable: bool

    @property
    def n(self) -> int:
        return len(self.samples_s)

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    @property
    def mean_s(self) -> float:
        return statistics.fmean(self.samples_s)

    def percentile_s(self, q: float) -> float:
        return percentile(self.samples_s, q)

    @property
    def cv(self) -> float:
        if self.n < 2:
            return 0.0
        return statistics.stdev(self.samples_s) / self.mean_s

    @property
    def ci95_s(self) -> tuple[float, float]:
        return median_ci(self.samples_s)

    @property
    def total_s(self) -> float:
        return math.fsum(self.samples_s)


def percentile(values: tuple[float, ...] | list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median_ci(values: tuple[float, ...] | list[float]) -> tuple[float, float]:
    """95% confidence interval of the median from order statistics (no assumption of normality)."""
    ordered = sorted(values)
    n = len(ordered)
    if n < 6:
        return ordered[0], ordered[-1]
    half_width = Z95 * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half_width) - 1)
    high = min(n - 1, math.ceil(n / 2 + half_width))
    return ordered[low], ordered[high]


def relative_ci(values: tuple[float, ...] | list[float]) -> float:
    low, high = median_ci(values)
    middle = statistics.median(values)
    return (high - low) / middle if middle > 0 else math.inf


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def timed(step: Callable[[], object], sync: Callable[[], None] | None) -> float:
    """Seconds one step takes, queued device work included."""
    if sync is not None:
        sync()
    start = time.perf_counter_ns()
    step()
    if sync is not None:
        sync()
    return (time.perf_counter_ns() - start) / 1e9


def for_device(config: MeasureSpec, device: str) -> MeasureSpec:
    """The settings with the device's own minimums where the suite left them unset."""
    warmup, sampling = (0.0, 0.0) if device == "cpu" else (GPU_WARMUP_MIN_S, GPU_SAMPLING_MIN_S)
    return config.model_copy(
        update={
            "warmup_min_s": config.warmup_min_s if config.warmup_min_s is not None else warmup,
            "sampling_min_s": config.sampling_min_s if config.sampling_min_s is not None else sampling,
        }
    )


def warm_up(step: Callable[[], object], sync: Callable[[], None] | None, config: MeasureSpec, *, timer: TimerFn) -> int:
    """Run until two successive windows agree (and warmup_min_s has passed), or the warm-up budget is
    spent; returns iterations."""
    times: list[float] = []
    start = time.perf_counter()
    least = start + (config.warmup_min_s or 0.0)
    deadline = max(start + config.warmup_budget_s, least)
    window = config.warmup_window
    while True:
        times.append(timer(step, sync))
        if time.perf_counter() < least:
            continue
        if len(times) >= max(config.warmup_min, 2 * window):
            previous = statistics.median(times[-2 * window : -window])
            latest = statistics.median(times[-window:])
            if abs(latest - previous) <= config.warmup_tolerance * previous:
                return len(times)
        if len(times) >= config.warmup_min and time.perf_counter() >= deadline:
            return len(times)


TimerFn = Callable[[Callable[[], object], Callable[[], None] | None], float]


def measure(
    step: Callable[[], object],
    config: MeasureSpec,
    *,
    sync: Callable[[], None] | None = None,
    timer: TimerFn = timed,
    region: AbstractContextManager[object] | None = None,
) -> Timing:
    """Warm up, then sample step times by the stopping rule in the module docstring.

    ``region`` (an energy meter) is entered around the sampling phase only, not the warm-up."""
    with gc_paused():
        warmup = warm_up(step, sync, config, timer=timer)
        with region or nullcontext():
            samples, stable = _sample(step, sync, config, timer)
    return Timing(tuple(samples), warmup, stable=stable)


def _sample(
    step: Callable[[], object], sync: Callable[[], None] | None, config: MeasureSpec, timer: TimerFn
) -> tuple[list[float], bool]:
    if config.fixed_iterations is not None:
        samples = [timer(step, sync) for _ in range(config.fixed_iterations)]
        return samples, relative_ci(samples) <= config.target_ci
    samples = []
    sampled_s = 0.0  # the minimum counts time inside the steps, not the loop's own between them
    least = config.sampling_min_s or 0.0
    start = time.perf_counter()
    deadline = start + max(config.time_budget_s, least)
    next_check = config.min_iterations
    while len(samples) < config.max_iterations:
        samples.append(timer(step, sync))
        sampled_s += samples[-1]
        if len(samples) >= next_check and sampled_s >= least:
            # Checking every ~10% more samples keeps the bookkeeping off fast steps' wall clock.
            next_check = len(samples) + max(1, len(samples) // 10)
            if relative_ci(samples) <= config.target_ci:
                return samples, True
        if len(samples) >= config.min_iterations and sampled_s >= least and time.perf_counter() >= deadline:
            break
        if time.perf_counter() >= deadline + config.time_budget_s:
            break  # a step slower than the whole budget: keep what we have
    return samples, False
