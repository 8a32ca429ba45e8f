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
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.catalog import CatalogHardware
from app.contracts import Cluster, Precision, Task
from app.errors import InvalidInput
from app.perfmodel import scaling
from app.perfmodel.profile import Memory
from app.planner.memory import Fit

Array = npt.NDArray[np.float64]
SHARDED_TRAFFIC = 1.5
"""Bytes a sharded data-parallel step moves, as a multiple of a plain all-reduce's (see above)."""
ASSUMED_PCIE = (3, 16)
"""The link assumed for a part whose entry has neither NVLink nor a PCIe generation and width."""


@dataclass(frozen=True, slots=True)
class Scaled:
    devices: Array
    """Every device count the plan may use, ascending."""
    throughput: Array
    """Samples/s of all of them together, per count."""
    parallelism: str
    link_inside: scaling.Link | None
    """What a ring inside one system crosses (training), or a pipeline's stages (inference)."""
    gradient_bytes: float
    """What one step's collective moves per device (training; 0 for inference)."""


def links(hardware: CatalogHardware | None, cluster: Cluster) -> tuple[scaling.Link, scaling.Link]:
    """The link inside one system and the network between systems."""
    network = scaling.Link("network", cluster.network_gb_s, f"network {cluster.network_gb_s:g} GB/s per device")
    if hardware is None or hardware.kind == "cpu":
        return network, network  # a CPU is its own system: its data-parallel peers are over the network
    try:
        return scaling.link_of(hardware, max(2, cluster.devices_per_system)), network
    except InvalidInput:
        gen, lanes = ASSUMED_PCIE
        gb_s = scaling.PCIE_GB_S_PER_LANE[gen] * lanes
        return scaling.Link("pcie", gb_s, f"PCIe gen {gen} x{lanes} (assumed: the catalog gives no link)"), network


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
) -> Scaled:
    """Throughput for every allowed device count (training without a profile: one device only, for
    the gradients' size is unknown)."""
    if task is Task.infer:
        counts = np.arange(fit.shards, cluster.max_devices + 1, fit.shards, dtype=np.float64)
        inside = links(hardware, cluster)[0] if fit.shards > 1 else None
        return Scaled(counts, counts * single_throughput, "pipeline" if fit.shards > 1 else "replicas", inside, 0.0)
    counts = np.arange(fit.shards, cluster.max_devices + 1, dtype=np.float64)
    if memory is None:
        return Scaled(counts[:1], counts[:1] * single_throughput, "single", None, 0.0)
    inside, network = links(hardware, cluster)
    gb_s = np.where(counts <= cluster.devices_per_system, inside.gb_s, min(inside.gb_s, network.gb_s))
    gradient = memory.weights / scaling.WEIGHT_BYTES * scaling.GRADIENT_BYTES.get(precision, 4.0)
    if fit.shards > 1:
        gradient *= SHARDED_TRAFFIC
    params = scaling.shipped().params
    throughput = scaling.data_parallel_throughputs(batch / single_throughput, batch, counts, gradient, gb_s, params)
    parallelism = "sharded_data_parallel" if fit.shards > 1 else "data_parallel"
    return Scaled(counts, throughput, parallelism, inside, gradient)


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
