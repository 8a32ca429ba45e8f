"""Harness truth: on work of known cost the harness reports that cost; the stopping rule is obeyed."""

from __future__ import annotations

import itertools
import statistics
import time

import numpy as np
import pytest

from app.bench.measure import (
    GPU_SAMPLING_MIN_S,
    GPU_WARMUP_MIN_S,
    for_device,
    measure,
    median_ci,
    percentile,
    relative_ci,
)
from app.contracts import MeasureSpec

pytestmark = pytest.mark.alone  # times this machine's CPU: run apart from the other tests

KNOWN_MS = 5.0


def spin(ms: float) -> None:
    """Busy-wait: a step that costs exactly `ms` of wall clock."""
    end = time.perf_counter_ns() + int(ms * 1e6)
    while time.perf_counter_ns() < end:
        pass


def test_harness_reports_a_known_cost_within_two_percent() -> None:
    timing = measure(lambda: spin(KNOWN_MS), MeasureSpec(time_budget_s=2.0, warmup_budget_s=0.2))
    assert abs(timing.median_s * 1000 - KNOWN_MS) / KNOWN_MS < 0.02
    assert timing.n >= 10


def test_fixed_iteration_count_is_obeyed_exactly() -> None:
    calls = itertools.count()
    timing = measure(lambda: next(calls), MeasureSpec(fixed_iterations=37, warmup_min=3, warmup_budget_s=0.0))
    assert timing.n == 37
    assert next(calls) == 37 + timing.warmup_iterations


def test_sampling_stops_once_the_median_is_known_to_the_target() -> None:
    values = itertools.cycle([0.0100, 0.0101, 0.0099])
    timing = measure(lambda: None, MeasureSpec(target_ci=0.02), timer=lambda _step, _sync: next(values))
    assert timing.stable and timing.n == 10


def test_noisy_step_runs_out_its_budget_and_is_not_called_stable() -> None:
    rng = np.random.default_rng(0)
    config = MeasureSpec(target_ci=0.001, time_budget_s=0.3, warmup_budget_s=0.05)
    timing = measure(lambda: spin(float(rng.uniform(0.5, 3.0))), config)
    assert not timing.stable
    assert timing.n >= config.min_iterations


def test_warm_up_waits_for_a_slow_start_to_settle() -> None:
    costs = iter([50.0, 30.0, 20.0] + [1.0] * 1000)
    timing = measure(lambda: None, MeasureSpec(fixed_iterations=5), timer=lambda _s, _y: next(costs))
    assert timing.warmup_iterations == 11  # windows [30,20,1,1,1] and [1]*5 agree on a median of 1
    assert timing.samples_s == (1.0,) * 5


def test_percentiles_match_numpy() -> None:
    values = list(np.random.default_rng(1).lognormal(size=501))
    for q in (50, 90, 99):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_median_ci_covers_the_true_median_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(2)
    covered = 0
    for _ in range(400):
        sample = list(rng.exponential(size=60))
        low, high = median_ci(sample)
        covered += low <= np.log(2) <= high
    assert 0.92 <= covered / 400 <= 0.99


def test_relative_ci_shrinks_with_more_samples() -> None:
    rng = np.random.default_rng(3)
    small, large = list(rng.normal(10, 1, 20)), list(rng.normal(10, 1, 2000))
    assert relative_ci(large) < relative_ci(small)
    assert statistics.median(large) == pytest.approx(10, rel=0.02)


def test_a_gpu_warms_up_and_samples_for_its_minimums_even_when_steps_agree_at_once() -> None:
    """Steady steps say nothing of the clock: a GPU from idle ramps it, a power-capped one lowers it."""
    spec = for_device(MeasureSpec(time_budget_s=0.05, warmup_budget_s=0.0), "cuda:0")
    assert (spec.warmup_min_s, spec.sampling_min_s) == (GPU_WARMUP_MIN_S, GPU_SAMPLING_MIN_S)
    short = spec.model_copy(update={"warmup_min_s": 0.3, "sampling_min_s": 0.4})
    started: list[float] = []

    def step() -> None:
        started.append(time.perf_counter())
        spin(2.0)

    timing = measure(step, short)
    # wall clock, not a count of 2 ms steps: on a busy machine a step takes longer than it spins
    assert started[timing.warmup_iterations] - started[0] >= 0.3
    assert timing.total_s >= 0.4 and timing.stable


def test_a_cpu_keeps_the_plain_stopping_rule_and_a_suite_may_set_the_minimums() -> None:
    cpu = for_device(MeasureSpec(), "cpu")
    assert (cpu.warmup_min_s, cpu.sampling_min_s) == (0.0, 0.0)
    timing = measure(lambda: spin(2.0), cpu.model_copy(update={"warmup_budget_s": 0.0}))
    assert timing.total_s < 0.2, "the CI is met after a handful of identical steps"
    chosen = for_device(MeasureSpec(warmup_min_s=0.0, sampling_min_s=3.0), "cuda:0")
    assert (chosen.warmup_min_s, chosen.sampling_min_s) == (0.0, 3.0)
