"""Run a suite's configs on this machine and turn each into a Result.

One config's failure never stops the suite: a combination the machine cannot run is recorded
``unsupported`` with why, an out-of-memory batch ``oom``, any other exception ``error`` with its
message. Ctrl-C stops after keeping what finished.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime

import torch

from app import __version__
from app.bench import data_parallel
from app.bench.config import BenchConfig
from app.bench.energy import EnergyReading, Metered, PeakRss, Sampler, meter_for
from app.bench.measure import Timing, for_device, measure, timed
from app.bench.primitives import primitives
from app.bench.runtimes import runtimes
from app.bench.runtimes.base import Runtime
from app.bench.suites import Suite
from app.bench.unrunnable import task_unrun, unknown_runtime, unknown_variant, unknown_workload, workload_unsupported
from app.bench.variants import variants, workload_for
from app.bench.workloads import Size
from app.contracts import MachineSpec, MeasureSpec, PowerSource, Result, ResultStatus, RunReport

MIB = 1024 * 1024
Progress = Callable[[int, int, BenchConfig, float | None], None]
"""(index starting at 1, total, the config about to run, seconds left by estimate or None)."""


@dataclass
class SuiteRun:
    results: list[Result] = field(default_factory=list)
    interrupted: bool = False
    skipped: int = 0
    """Configs passed over because an earlier attempt of the job measured them (``run_suite``'s skip)."""
    total: int = 0
    """The suite's configs on this machine, measured or not."""


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError | torch.cuda.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return any(words in text for words in ("out of memory", "failed to allocate memory", "can't allocate memory"))


def _config_fields(config: BenchConfig) -> dict[str, object]:
    return {
        "workload": config.workload,
        "task": config.task,
        "runtime": config.runtime,
        "device": config.device,
        "precision": config.precision,
        "batch_size": config.batch_size,
        "threads": config.threads,
        "devices": config.devices,
        "context_tokens": config.context,
        "variant": config.variant,
    }


def _failed(config: BenchConfig, status: ResultStatus, reason: str) -> Result:
    return Result.model_validate({**_config_fields(config), "status": status, "reason": reason[:2000]})


def unsupported_reason(config: BenchConfig, machine: MachineSpec, *, nodes: int = 1) -> str | None:
    """Why the config cannot run here (on each of ``nodes`` machines), or None; for several devices,
    what data parallelism needs first."""
    primitive = config.workload in primitives
    if reason := unknown_workload(config.workload):
        return reason
    if not primitive and (reason := unknown_runtime(config.runtime)):
        return reason
    if config.devices * nodes > 1 and (reason := data_parallel.unsupported(config, machine, nodes=nodes)):
        return reason
    if primitive:
        if config.variant is not None:
            return f"{config.workload} is a primitive: it has no model variants"
        return primitives.get(config.workload)().unsupported(config, machine)
    if reason := workload_unsupported(config.workload, config.task, config.precision):
        return reason
    runtime = runtimes.get(config.runtime)()
    # what the variant rules out holds everywhere; a runtime's own reasons may be this process's
    # (TensorFlow's thread pools, fixed once), so they come after it
    if reason := runtime.unavailable() or variant_unsupported(config, runtime) or runtime.unsupported(config, machine):
        return reason
    return task_unrun(config.runtime, config.task)


def variant_unsupported(config: BenchConfig, runtime: Runtime) -> str | None:
    if config.variant is None:
        return None
    if reason := unknown_variant(config.variant):
        return reason
    variant = variants.get(config.variant)()
    return variant.unsupported(config) or runtime.variant_unsupported(variant, config)


def _result(
    config: BenchConfig,
    timing: Timing,
    energy: EnergyReading | None,
    peak_memory_mb: float | None,
    *,
    compile_time_s: float | None = None,
    work: tuple[float, str] | None = None,
    samples_per_step: int | None = None,
    scaling_efficiency: float | None = None,
    tokens: Tokens | None = None,
) -> Result:
    """``samples_per_step`` defaults to the batch; a data-parallel step trains every rank's batch."""
    median = timing.median_s
    low, high = timing.ci95_s
    per_step = samples_per_step or config.batch_size
    samples = timing.n * per_step
    joules = energy.joules if energy is not None and energy.source is not PowerSource.none else None
    tflops = bandwidth = None
    if work is not None:
        amount, unit = work
        if unit == "flop":
            tflops = amount / median / 1e12
        else:
            bandwidth = amount / median / 1e9
    return Result.model_validate(
        {
            **_config_fields(config),
            "status": ResultStatus.ok,
            "throughput_samples_per_s": per_step / median,
            "latency_p50_ms": median * 1000,
            "latency_p90_ms": timing.percentile_s(90) * 1000,
            "latency_p99_ms": timing.percentile_s(99) * 1000,
            "latency_mean_ms": timing.mean_s * 1000,
            "latency_ci95_low_ms": low * 1000,
            "latency_ci95_high_ms": high * 1000,
            "cv": timing.cv,
            "iterations": timing.n,
            "stable": timing.stable,
            "peak_memory_mb": peak_memory_mb,
            "mean_power_w": energy.mean_power_w if energy is not None and joules is not None else None,
            "energy_per_sample_j": joules / samples if joules is not None else None,
            "power_source": energy.source if energy is not None and joules is not None else PowerSource.none,
            "achieved_tflops": tflops,
            "bandwidth_gb_per_s": bandwidth,
            "compile_time_s": compile_time_s,
            "scaling_efficiency": scaling_efficiency,
            **(tokens.fields(median, joules / timing.n if joules is not None else None) if tokens else {}),
        }
    )


@dataclass(frozen=True, slots=True)
class Tokens:
    """A language model's step in tokens: how many it processes, at what context, with what cache."""

    per_step: int
    context: int
    kv_cache_bytes: int | None

    def fields(self, median_s: float, joules_per_step: float | None) -> dict[str, object]:
        return {
            "context_tokens": self.context,
            "throughput_tokens_per_s": self.per_step / median_s,
            "energy_per_token_j": joules_per_step / self.per_step if joules_per_step is not None else None,
            "kv_cache_mb": self.kv_cache_bytes / MIB if self.kv_cache_bytes is not None else None,
        }


def run_config(
    config: BenchConfig, machine: MachineSpec, measure_config: MeasureSpec, *, size: Size = "standard"
) -> Result:
    """Measure one config; never raises for the config's own failures."""
    measure_config = for_device(measure_config, config.device)
    reason = unsupported_reason(config, machine)
    if reason:
        return _failed(config, ResultStatus.unsupported, reason)
    if config.devices > 1:
        return _run_parallel(config, machine, measure_config, size)
    threads_before = torch.get_num_threads()
    rss = PeakRss()
    energy = Metered(meter_for(config.device, machine))
    try:
        with Sampler(rss):
            if config.workload in primitives:
                primitive = primitives.get(config.workload)().prepare(config)
                try:
                    timing = measure(
                        primitive.step,
                        measure_config,
                        sync=primitive.sync,
                        timer=primitive.timer or timed,
                        region=energy,
                    )
                finally:
                    primitive.close()
                peak = primitive.peak_device_memory_mb() if config.device != "cpu" else rss.peak_mb
                return _result(config, timing, energy.reading, peak, work=(primitive.work, primitive.unit))
            workload = workload_for(config.workload, config.variant)
            prepared = runtimes.get(config.runtime)().prepare(config, workload, size)
            try:
                timing = measure(
                    prepared.step, measure_config, sync=prepared.sync, timer=prepared.timer or timed, region=energy
                )
                device_peak = prepared.peak_device_memory_mb()
            finally:
                prepared.close()
        peak = device_peak if device_peak is not None else rss.peak_mb
        tokens = None
        if prepared.tokens_per_step is not None and prepared.context is not None:
            tokens = Tokens(prepared.tokens_per_step, prepared.context, prepared.kv_cache_bytes)
        return _result(config, timing, energy.reading, peak, compile_time_s=prepared.compile_time_s, tokens=tokens)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        return _caught(config, exc)
    finally:
        torch.set_num_threads(threads_before)
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _caught(config: BenchConfig, exc: Exception) -> Result:
    status = ResultStatus.oom if _is_oom(exc) else ResultStatus.error
    return _failed(config, status, f"{exc.__class__.__name__}: {exc}")


def _run_parallel(config: BenchConfig, machine: MachineSpec, measure_config: MeasureSpec, size: Size) -> Result:
    """devices > 1: one process per device (app/bench/data_parallel.py). No energy figure yet: this
    process's meters see neither the other processes' CPU time nor the other GPUs."""
    config = data_parallel.resolved(config, machine)
    try:
        outcome = data_parallel.measure_parallel(config, measure_config, size=size)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        return _caught(config, exc)
    assert outcome is not None  # one machine's run always has its rank 0 here
    return _parallel_result(config, outcome)


def _parallel_result(config: BenchConfig, outcome: data_parallel.ParallelTiming) -> Result:
    """``config.devices`` ranks' timings as a result: a training step trains every rank's batch."""
    collective = config.workload in primitives
    return _result(
        config,
        outcome.timing,
        None,
        outcome.peak_memory_mb,
        work=outcome.work,
        samples_per_step=config.batch_size * (1 if collective else config.devices),
        scaling_efficiency=outcome.scaling_efficiency,
    )


def run_node_config(
    config: BenchConfig,
    machine: MachineSpec,
    measure_config: MeasureSpec,
    rendezvous: data_parallel.Rendezvous,
    *,
    size: Size = "standard",
) -> Result | None:
    """This machine's part of one config run data-parallel over ``rendezvous.nodes`` machines: node 0
    gets the result (``devices`` = every node's ranks), the other nodes None."""
    world = dataclasses.replace(config, devices=rendezvous.world(config.devices))
    over = {"nodes": rendezvous.nodes, "cluster": rendezvous.cluster}
    reason = unsupported_reason(config, machine, nodes=rendezvous.nodes)
    if reason:
        return _failed(world, ResultStatus.unsupported, reason).model_copy(update=over)
    config = data_parallel.resolved(config, machine)
    try:
        outcome = data_parallel.measure_parallel(config, measure_config, size=size, rendezvous=rendezvous)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        return _caught(world, exc).model_copy(update=over) if rendezvous.node_rank == 0 else None
    if outcome is None:
        return None
    return _parallel_result(dataclasses.replace(world, threads=config.threads), outcome).model_copy(update=over)


def run_suite(
    suite: Suite,
    machine: MachineSpec,
    *,
    only: str | None = None,
    fixed_iterations: int | None = None,
    size: Size = "standard",
    progress: Progress | None = None,
    on_result: Callable[[int, int, Result], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    rendezvous: data_parallel.Rendezvous | None = None,
    skip: Collection[str] = (),
) -> SuiteRun:
    """Every config in order. ``on_result`` (index, total, result) sees each result as it is made,
    between timed regions; ``should_stop`` is asked before each config (an agent's SIGTERM). With a
    ``rendezvous`` every config runs data-parallel over the cluster's machines, each config at the
    next port; only node 0 keeps results. A config whose label is in ``skip`` (a resumed job's, measured
    by an earlier attempt) is passed over, keeping its place in the indices."""
    configs = suite.configs(machine, only=only)
    settings = suite.measure.model_copy(update={"fixed_iterations": fixed_iterations or suite.measure.fixed_iterations})
    run = SuiteRun(total=len(configs))
    started = time.perf_counter()
    for index, config in enumerate(configs, start=1):
        done = index - 1 - run.skipped  # measured here: a resumed job's skipped configs took no time
        eta = (time.perf_counter() - started) / done * (len(configs) - index + 1) if done else None
        if should_stop is not None and should_stop():
            run.interrupted = True
            break
        if skip and config.label() in skip:
            run.skipped += 1
            continue
        try:
            if progress is not None:
                progress(index, len(configs), config, eta)
            if rendezvous is None:
                _ahead(config, configs[index:], skip, machine, size)
                result: Result | None = run_config(config, machine, settings, size=size)
            else:
                at = dataclasses.replace(rendezvous, port=rendezvous.port + index - 1)
                result = run_node_config(config, machine, settings, at, size=size)
            if result is None:
                continue
            run.results.append(result)
            if on_result is not None:
                on_result(index, len(configs), result)
        except KeyboardInterrupt:
            run.interrupted = True
            break
    return run


def _ahead(
    config: BenchConfig, later: list[BenchConfig], skip: Collection[str], machine: MachineSpec, size: Size
) -> None:
    """Let the config's runtime make what the config shares with the suite's later configs of its
    runtime and workload that can run here and are not skipped (``Runtime.ahead``: LiteRT's conversions
    of one model)."""
    if config.workload in primitives or unknown_runtime(config.runtime):
        return
    runtime = runtimes.get(config.runtime)()
    if type(runtime).ahead is Runtime.ahead or unsupported_reason(config, machine):
        return
    kin = [
        c
        for c in later
        if (c.runtime, c.workload) == (config.runtime, config.workload)
        and not (skip and c.label() in skip)
        and unsupported_reason(c, machine) is None
    ]
    # what fails here, each config's own prepare meets again and reports as that config's error
    with contextlib.suppress(Exception):
        runtime.ahead(config, kin, size)


def run_report(suite: Suite, machine: MachineSpec, run: SuiteRun, *, started_at: datetime) -> RunReport:
    return RunReport(
        run_id=uuid.uuid4(),
        suite=suite.name,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        agent_version=__version__,
        machine=machine,
        results=run.results,
    )
