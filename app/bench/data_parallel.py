"""One config on N devices at once: N processes of torch.distributed, data-parallel training.

Each rank is a spawned process (gloo on the CPU, NCCL on CUDA) that joins a store the parent holds
on 127.0.0.1 at a port the OS picked, so no two runs race for a port. A workload's rank trains its
own replica of the zoo model under DistributedDataParallel on its own mini-batch (``batch_size`` is
per device), through torch-eager's training step; a collective primitive (``allreduce_*``) runs its
step in every rank the same way.

Rank 0 leads the harness (app/bench/measure.py: warm-up, stopping rule, statistics): before each
step it tells the others to step or stop, and each timed step sits between two barriers, so a
sample is the wall time of one step of all ranks together. Before that, in the same processes,
rank 0 alone measures the plain model with the same threads while the others wait: one device
measured the same way, the baseline of the scaling efficiency,
``throughput(N) / (N x throughput(1)) = baseline step time / N-rank step time``.

Over several machines (a declared cluster, ``Rendezvous``) each machine spawns its own ranks for the
same config; node 0's parent holds the store at a port every node was told, the ranks of node k are
numbered after those of the nodes before it, and node 0's rank 0 leads and records the result: all
ranks' samples over the step of all of them, and one device's baseline measured in the same run.

On the CPU a "device" is a process with its share of the cores: each rank runs ``config.threads``
threads, or the usable CPUs // N.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import pickle
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed import TCPStore  # type: ignore[attr-defined]  # public; torch does not list it in __all__
from torch.multiprocessing.spawn import ProcessExitedException, ProcessRaisedException, start_processes

from app.bench.config import BenchConfig
from app.bench.measure import Timing, gc_paused, measure, timed
from app.bench.primitives import primitives
from app.bench.runtimes.torch_eager import TorchEager
from app.bench.variants import workload_for
from app.bench.workloads import Size
from app.contracts import MachineSpec, MeasureSpec, Task

HOST = "127.0.0.1"
GO, STOP = 1, 0
OUTCOME = "outcome.pickle"


class RankFailed(RuntimeError):
    """A rank raised or died; the message is that rank's error, so an out-of-memory reads as one."""


@dataclasses.dataclass(frozen=True, slots=True)
class ParallelTiming:
    timing: Timing
    """Step times of all ranks together."""
    baseline: Timing | None
    """One device's step times, measured in the same processes; None for a collective."""
    peak_memory_mb: float | None
    """Rank 0's: peak CUDA allocation on a GPU, peak RSS on the CPU."""
    work: tuple[float, str] | None
    """A collective's bytes per step (bus bytes) and their unit; None for training."""

    @property
    def scaling_efficiency(self) -> float | None:
        if self.baseline is None:
            return None
        return self.baseline.median_s / self.timing.median_s


@dataclasses.dataclass(frozen=True, slots=True)
class Rendezvous:
    """This machine's place in a data-parallel run over several machines: ``nodes`` machines each run
    the config's ``devices`` ranks; node 0 holds the store the others join at ``master``:``port``, and
    its rank 0 leads and records the result (``cluster``: the declared cluster they form)."""

    master: str
    port: int
    nodes: int
    node_rank: int
    cluster: str | None = None

    def world(self, local: int) -> int:
        return self.nodes * local


@dataclasses.dataclass(frozen=True, slots=True)
class _Job:
    config: BenchConfig
    measure: MeasureSpec
    size: Size
    host: str
    port: int
    folder: str
    offset: int = 0
    """The global rank of this machine's first rank."""
    world: int = 0
    """Ranks on every machine together (0: this machine's alone)."""


def usable_cpus(machine: MachineSpec) -> int:
    return max(1, math.floor(machine.cpu.effective_cpus))


def resolved(config: BenchConfig, machine: MachineSpec) -> BenchConfig:
    """The config as it runs: on the CPU, each rank's threads (config.threads or its share of the CPUs)."""
    if config.device != "cpu" or config.threads:
        return config
    return dataclasses.replace(config, threads=max(1, usable_cpus(machine) // config.devices))


def _gpu_count(machine: MachineSpec) -> int:
    listed = sum(1 for d in machine.devices if d.kind.value == "cuda")
    return min(listed, torch.cuda.device_count()) if torch.cuda.is_available() else 0


def unsupported(config: BenchConfig, machine: MachineSpec, *, nodes: int = 1) -> str | None:
    """Why this config cannot run on ``config.devices`` devices here (on each of ``nodes`` machines),
    or None (what to do, if not)."""
    n = config.devices * nodes
    if not dist.is_available():
        return f"this torch ({torch.__version__}) has no torch.distributed: install a build with it to use devices={n}"
    if config.workload in primitives:
        if not primitives.get(config.workload).collective:
            return (
                f"{config.workload} measures one device; devices={n} is for training (task train) and "
                "collectives (allreduce_*): use devices=1"
            )
    elif config.task is not Task.train:
        return (
            f"devices={n} measures data-parallel training: use task train (inference on {n} devices is "
            f"{n} independent copies; measure devices=1)"
        )
    elif config.runtime != "torch-eager":
        return f"data-parallel training runs in torch-eager: use runtime torch-eager for devices={n}"
    n = config.devices  # the rest is about this machine's ranks
    if config.device == "cpu":
        limit = max(2, usable_cpus(machine))
        if n > limit:
            usable = usable_cpus(machine)
            return f"devices={n} on the CPU needs a core per rank; {usable} are usable: use devices={limit} or fewer"
        if not dist.is_gloo_available():
            return f"this torch ({torch.__version__}) has no gloo backend: install a build with it to use devices={n}"
        return None
    first = _first(config)
    gpus = _gpu_count(machine)
    if first + n > gpus:
        fewer = f"use devices={gpus - first} or fewer" if gpus - first >= 2 else "use devices=1"
        span = f"cuda:{first}..cuda:{first + n - 1}"
        return f"devices={n} from {config.device} needs {span}; this machine has {gpus} GPU(s): {fewer}"
    if not dist.is_nccl_available():
        return f"this torch ({torch.__version__}) has no NCCL: install a CUDA build of torch to use devices={n} on GPUs"
    return None


def measure_parallel(
    config: BenchConfig,
    measure_config: MeasureSpec,
    *,
    size: Size = "standard",
    rendezvous: Rendezvous | None = None,
) -> ParallelTiming | None:
    """Spawn ``config.devices`` ranks, measure, and return rank 0's timings; raises RankFailed. Over
    several machines (``rendezvous``) every node spawns its ranks; only node 0 gets the timings (the
    others None)."""
    n = config.devices
    timeout = _timeout(measure_config)
    if rendezvous is None:
        store = TCPStore(HOST, 0, world_size=None, is_master=True, timeout=timeout, wait_for_workers=False)
        host, port, offset, world = HOST, store.port, 0, n
    else:
        store = _joined(config, rendezvous, timeout)
        host, port = rendezvous.master, rendezvous.port
        offset, world = rendezvous.node_rank * n, rendezvous.world(n)
    with tempfile.TemporaryDirectory(prefix="hwadvisor-dp-") as folder:
        job = _Job(config, measure_config, size, host, port, folder, offset, world)
        try:
            start_processes(_rank, args=(job,), nprocs=n, join=True, start_method="spawn")
        except (ProcessRaisedException, ProcessExitedException) as exc:
            error = Path(folder, f"error-{exc.error_index}.txt")
            detail = error.read_text(encoding="utf-8") if error.is_file() else str(exc).strip()
            raise RankFailed(f"rank {offset + exc.error_index} of {world}: {detail}") from None
        del store  # node 0's store lives until every rank has left
        found = Path(folder, OUTCOME)
        if not found.is_file():
            return None
        with found.open("rb") as file:
            outcome: ParallelTiming = pickle.load(file)
    return outcome


def _joined(config: BenchConfig, rendezvous: Rendezvous, timeout: timedelta) -> TCPStore:
    """Node 0 holds the run's store and says which config it runs; every other node joins it and
    checks it runs the same one (every node must be given the same suite, in the same order)."""
    where = f"{rendezvous.master}:{rendezvous.port}"
    first = rendezvous.node_rank == 0
    try:
        store = TCPStore(
            rendezvous.master,
            rendezvous.port,
            world_size=None,
            is_master=first,
            timeout=timeout,
            wait_for_workers=False,
        )
        if first:
            store.set("config", config.label())
            return store
        leads = store.get("config").decode()
    except (RuntimeError, OSError) as exc:
        role = "hold the run's store at" if first else "reach node 0 at"
        raise RankFailed(
            f"node {rendezvous.node_rank} could not {role} {where} ({exc}): start node 0 first, with the port free "
            "and reachable from every node"
        ) from None
    if leads != config.label():
        raise RankFailed(
            f"node {rendezvous.node_rank} would run {config.label()} while node 0 runs {leads}: give every node the "
            "same suite"
        )
    return store


def _timeout(measure_config: MeasureSpec) -> timedelta:
    """Longer than rank 0 can keep the others waiting (the baseline's warm-up and sampling)."""
    return timedelta(seconds=600 + 4 * (measure_config.warmup_budget_s + measure_config.time_budget_s))


def _rank(rank: int, job: _Job) -> None:
    """One rank's life: join the group, prepare, lead or follow the harness; rank 0 writes the outcome.
    ``rank`` is this machine's; the group's is ``job.offset`` more."""
    try:
        config = job.config
        device = torch.device("cpu" if config.device == "cpu" else f"cuda:{_first(config) + rank}")
        if device.type == "cuda":
            torch.cuda.set_device(device)
        elif config.threads:
            torch.set_num_threads(config.threads)
        store = TCPStore(job.host, job.port, world_size=None, is_master=False, timeout=_timeout(job.measure))
        dist.init_process_group(
            "nccl" if device.type == "cuda" else "gloo",
            store=store,
            rank=job.offset + rank,
            world_size=job.world or config.devices,
            timeout=_timeout(job.measure),
        )
        local = dataclasses.replace(config, device=str(device), devices=1)
        outcome = _measure(job.offset + rank, job, local, device)
        if outcome is not None:
            with Path(job.folder, OUTCOME).open("wb") as file:
                pickle.dump(outcome, file)
        dist.barrier()
        dist.destroy_process_group()
    except BaseException as exc:
        Path(job.folder, f"error-{rank}.txt").write_text(f"{exc.__class__.__name__}: {exc}"[:2000], encoding="utf-8")
        raise


def _first(config: BenchConfig) -> int:
    """The index of the config's first GPU (cuda = cuda:0)."""
    return int(config.device.partition(":")[2] or 0)


def _measure(rank: int, job: _Job, local: BenchConfig, device: torch.device) -> ParallelTiming | None:
    from app.bench.energy import PeakRss, Sampler

    rss = PeakRss()
    with Sampler(rss):
        baseline = None
        if local.workload in primitives:
            prepared = primitives.get(local.workload)().prepare(local)
            step, sync, close, work = prepared.step, prepared.sync, prepared.close, (prepared.work, prepared.unit)
        else:
            workload = workload_for(local.workload, local.variant)
            if rank == 0:
                plain = TorchEager().prepare(local, workload, job.size)
                try:
                    baseline = measure(plain.step, job.measure, sync=plain.sync, timer=plain.timer or timed)
                finally:
                    plain.close()
                del plain
                gc.collect()  # the plain model's memory goes before the replica's peak is counted
            dist.barrier()  # the others wait here while rank 0 measures one device
            replica = _Replica().prepare(local, workload, job.size)
            step, sync, close, work = replica.step, replica.sync, replica.close, None
        try:
            if rank != 0:
                _follow(step, sync, device)
                return None
            timing = measure(step, job.measure, sync=sync, timer=_leader(device))
            _command(STOP, device)
        finally:
            close()
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else rss.peak_mb
    return ParallelTiming(timing, baseline, peak, work)


class _Replica(TorchEager):
    """torch-eager's step with the model under DistributedDataParallel: its backward all-reduces
    the gradients, which is the cost data parallelism adds."""

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        from torch.nn.parallel import DistributedDataParallel

        device = next(model.parameters()).device
        return DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)


def _command(value: int, device: torch.device) -> int:
    """Rank 0 sends ``value``; every rank returns what rank 0 sent."""
    flag = torch.tensor([value], dtype=torch.int32, device=device)
    dist.broadcast(flag, src=0)
    return int(flag.item())


def _leader(device: torch.device) -> Callable[[Callable[[], object], Callable[[], None] | None], float]:
    """Rank 0's timer: tell the others to step, then time one step of all ranks between barriers."""

    def timer(step: Callable[[], object], sync: Callable[[], None] | None) -> float:
        _command(GO, device)
        if sync is not None:
            sync()
        dist.barrier()
        start = time.perf_counter_ns()
        step()
        if sync is not None:
            sync()
        dist.barrier()
        return (time.perf_counter_ns() - start) / 1e9

    return timer


def _follow(step: Callable[[], object], sync: Callable[[], None] | None, device: torch.device) -> None:
    """Every other rank: step as rank 0 says, with the same barriers, until it says stop."""
    with gc_paused():
        while _command(STOP, device) == GO:
            if sync is not None:
                sync()
            dist.barrier()
            step()
            if sync is not None:
                sync()
            dist.barrier()
