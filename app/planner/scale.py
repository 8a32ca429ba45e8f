"""How the throughput of N devices adds up, for every N a plan may use.

Inference runs independent copies (``replicas``), or pipelines of ``shards`` devices where one
cannot hold the model: N devices serve N times one device's samples per second (a pipeline's
stages are taken as balanced; the activations passed between stages are not counted).

Training is data-parallel: the single-device step plus the ring all-reduce of the gradients it
cannot hide (app/perfmodel/scaling.py, fitted on Lambda's multi-GPU rows). Within a system the ring
crosses the part's NVLink or PCIe; a ring over several systems crosses the network too, and the
slower of the two sets its pace. A sharded model (ZeRO-3 / FSDP) moves 1.5x the gradient bytes per
step: it all-gathers the weights for the forward and the backward pass and reduce-scatters the
gradients, three passes of (N - 1) / N against the all-reduce's two.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.catalog import CatalogHardware
from app.contracts import Cluster, Precision, ReasonCode, Task
from app.perfmodel import scaling
from app.perfmodel.lab_scaling import EMPTY, LabScaling, link_key
from app.perfmodel.profile import Memory
from app.planner.memory import Fit
from app.recommender.reasons import Why, why

Array = npt.NDArray[np.float64]
SHARDED_TRAFFIC = 1.5
"""Bytes a sharded data-parallel step moves, as a multiple of a plain all-reduce's (see above)."""
EXACT = 2048
"""Device counts up to this are all evaluated (``searched``): an array this short costs no more than a grid,
and it holds every count where a ring leaves its system (64 devices at most)."""
GRID = 1.02
"""Beyond ``EXACT``, the counts evaluated grow by this ratio until the target's window (``searched``)."""


@dataclass(frozen=True, slots=True)
class Scaled:
    devices: Array
    """The device counts evaluated, ascending: every count where the fewest reaching the target can be
    (``searched``), the first and the most the plan may use among them."""
    throughput: Array
    """Samples/s of all of them together, per count."""
    parallelism: str
    link_inside: scaling.Link | None
    """What a ring inside one system crosses (training), or a pipeline's stages (inference)."""
    gradient_bytes: float
    """What one step's collective moves per device (training; 0 for inference)."""
    lab: tuple[Why, ...] = ()
    """What the lab's own data-parallel runs changed (app/perfmodel/lab_scaling.py)."""


def links(hardware: CatalogHardware | None, cluster: Cluster) -> tuple[scaling.Link, scaling.Link]:
    """The link inside one system and the network between systems (a CPU is its own system: its
    data-parallel peers are over the network)."""
    network = scaling.Link("network", cluster.network_gb_s, f"network {cluster.network_gb_s:g} GB/s per device")
    inside = scaling.ring_link(hardware, max(2, cluster.devices_per_system))
    return (inside or network), network


def scaled(
    *,
    task: Task,
    single_throughput: float,
    batch: int,
    fit: Fit,
    memory: Memory | None,
    precision: Precision,
    hardware: CatalogHardware | None,
    cluster: Cluster,
    workload: str | None = None,
    lab: LabScaling = EMPTY,
    needed: float | None = None,
) -> Scaled:
    """Throughput at the device counts where the fewest reaching ``needed`` can be (``searched``; training
    without a profile: one device only, for the gradients' size is unknown). The lab's data-parallel runs
    (``lab``) calibrate the links they crossed, and a count the lab measured for this very config takes
    its measured efficiency."""
    step = fit.shards if task is Task.infer else 1
    if task is Task.infer:
        counts, throughput = searched(
            fit.shards, step, cluster.max_devices, needed, (), lambda n: n * single_throughput
        )
        inside = links(hardware, cluster)[0] if fit.shards > 1 else None
        return Scaled(counts, throughput, "pipeline" if fit.shards > 1 else "replicas", inside, 0.0)
    if memory is None:
        counts = np.array([float(fit.shards)])
        return Scaled(counts, counts * single_throughput, "single", None, 0.0)
    inside, network = links(hardware, cluster)
    gradient = memory.weights / scaling.WEIGHT_BYTES * scaling.GRADIENT_BYTES.get(precision, 4.0)
    if fit.shards > 1:
        gradient *= SHARDED_TRAFFIC
    params = scaling.shipped().params
    keys = _link_keys(inside, network, hardware, cluster)
    factors = [lab.factor(key) for key in keys]
    inside_factor, between_factor = (f.factor if f is not None else 1.0 for f in factors)
    measured = lab.measured_at(workload, precision, batch) if workload is not None and fit.shards == 1 else {}

    def crossing(counts: Array) -> npt.NDArray[np.bool_]:
        crosses: npt.NDArray[np.bool_] = (counts > cluster.devices_per_system) & (network.gb_s < inside.gb_s)
        return crosses

    def modelled(counts: Array) -> Array:
        gb_s = np.where(counts <= cluster.devices_per_system, inside.gb_s, min(inside.gb_s, network.gb_s))
        factor = np.where(crossing(counts), between_factor, inside_factor)
        single_step = batch / single_throughput
        return scaling.data_parallel_throughputs(single_step, batch, counts, gradient, gb_s, params, factor)

    # a count the lab measured, and the one after it (where the fewest is if the measured one falls short)
    extra = sorted({c for _key, n in measured for c in (n, n + step)})
    counts, throughput = searched(fit.shards, step, cluster.max_devices, needed, extra, modelled)
    said = [
        why(ReasonCode.lab_link, link=key.replace(":", " ", 1), factor=f.factor, runs=f.runs)
        for key, f in dict(zip(keys, factors, strict=True)).items()
        if f is not None
    ]
    crosses = crossing(counts)
    for i, n in enumerate(counts.astype(int).tolist() if measured else ()):
        at = measured.get((keys[1] if crosses[i] else keys[0], n))
        if at is not None:
            throughput[i] = n * single_throughput * at[0]
            said.append(why(ReasonCode.lab_scaling_measured, devices=n, batch_size=batch, efficiency=at[0], runs=at[1]))
    parallelism = "sharded_data_parallel" if fit.shards > 1 else "data_parallel"
    return Scaled(counts, throughput, parallelism, inside, gradient, tuple(said))


def searched(
    first: int,
    step: int,
    most: int,
    needed: float | None,
    extra: Sequence[int],
    throughput_of: Callable[[Array], Array],
) -> tuple[Array, Array]:
    """The device counts (``first``, then every ``step``-th up to ``most``), and ``throughput_of`` them, at
    which the fewest reaching
    ``needed`` samples/s can be, without evaluating all of them (a plan may allow 100,000 devices, and
    the planner sizes thousands of options): every count up to ``EXACT`` (where a ring leaves its system
    and the throughput dips), the ``extra`` counts (what the lab measured), a geometric grid (``GRID``)
    beyond, and ``most``; then every count between the grid's last point short of ``needed`` and its first
    reaching it, by ``throughput_of`` (the model's, before the lab's measured counts replace theirs).
    Past ``EXACT`` the model's throughput of N devices over the same links, N b / (t + exposed
    all-reduce), has no peak: where the all-reduce is exposed it falls and then rises at most once (the
    sign of its slope is t (1 - overlap) + 2 K (N - 2) / N - 2 hop, rising with N), and a peak where it
    first shows would need it hidden past ``EXACT`` devices and a hop longer than the step, which cannot
    both hold with an overlap below 0.99 (the fit's: 0.17). So the fewest reaching ``needed`` is among
    these counts, as if every count had been evaluated (tests/planner/test_scale.py)."""
    last = first + (most - first) // step * step
    if last <= EXACT:  # every count (none when the first is past the most)
        every = np.arange(first, last + 1, step, dtype=np.float64)
        return every, throughput_of(every)
    start = max(first, EXACT)
    grid = start * GRID ** np.arange(math.ceil(math.log(last / start) / math.log(GRID)) + 1)
    aligned = first + (grid.astype(np.int64) - first) // step * step
    beyond = np.unique(np.append(aligned[(aligned > EXACT) & (aligned <= last)], last))
    counts = np.concatenate([np.arange(first, EXACT + 1, step), beyond]).astype(np.float64)
    allowed = [c for c in extra if first <= c <= last and (c - first) % step == 0]
    if allowed:
        counts = np.union1d(counts, allowed)
    values = throughput_of(counts)
    reach = np.flatnonzero(values >= needed * (1 - 1e-12)) if needed is not None else np.array([0])
    if not len(reach) or reach[0] == 0:
        return counts, values
    k = int(reach[0])  # the window between the last count short of the target and the first reaching it
    between = np.arange(counts[k - 1] + step, counts[k], step, dtype=np.float64)
    return (
        np.concatenate([counts[:k], between, counts[k:]]),
        np.concatenate([values[:k], throughput_of(between), values[k:]]),
    )


def _link_keys(
    inside: scaling.Link, network: scaling.Link, hardware: CatalogHardware | None, cluster: Cluster
) -> tuple[str, str]:
    """Where the lab's calibration of each link is kept: inside one system, and between systems."""
    part = hardware.id if hardware is not None else None
    between = link_key(network, part=part, cluster=cluster.declared)
    if inside.kind == "network":  # a CPU: its peers are other systems from the second device on
        return between, between
    return link_key(inside, part=part), between


def fewest_reaching(found: Scaled, needed: float | None) -> int | None:
    """Index into ``found.devices`` of the fewest devices whose throughput reaches ``needed`` (the
    smallest count when nothing is needed); None when no allowed count does."""
    if needed is None:
        return 0
    reach = np.flatnonzero(found.throughput >= needed * (1 - 1e-12))
    return int(reach[0]) if len(reach) else None


def systems(devices: int, hardware: CatalogHardware | None, cluster: Cluster) -> int:
    """Servers the devices need: ``devices_per_system`` GPUs each; a CPU is a system of its own."""
    if hardware is not None and hardware.kind == "cpu":
        return devices
    return math.ceil(devices / cluster.devices_per_system)


def link_words(found: Scaled, devices: int, cluster: Cluster) -> str | None:
    if devices == 1 or found.link_inside is None:
        return None
    if devices > cluster.devices_per_system and found.link_inside.kind != "network":
        return f"{found.link_inside.why} inside a system; network {cluster.network_gb_s:g} GB/s per device between"
    return found.link_inside.why
