"""What is known about a workload and task: the lab's measurements, published results, and the
hardware they ran on. The database is read through app/db/evidence.py's query functions.

A *point* is one measured config on one piece of hardware, per device. The lab's points are the
latest ok result of each config on each machine's device; published points keep their
``public:...`` source and are never merged with the lab's.
"""

from __future__ import annotations

import statistics
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy.orm import Session

from app.catalog import CatalogHardware
from app.catalog.probed import as_probed
from app.contracts import DeviceKind, HardwareRef, PowerSource, Precision, Task
from app.db import catalog as public_results
from app.db import clusters
from app.db import evidence as queries
from app.db.evidence import OwnedDevice
from app.perfmodel import scaling
from app.perfmodel.lab_scaling import EMPTY, LabRun, LabScaling, link_key
from app.perfmodel.predict import profile_of

LAB = "lab"
REFERENCE = "reference:"
"""The prefix of a reference run's source (app/catalog/reference.py): measured by hwadvisor at each of
its batch sizes, as the lab measures, where a published source stands at the one batch it used."""


def by_batch(source: str) -> bool:
    """Whether a source's points are told apart by batch (the lab's, a reference run's)."""
    return source == LAB or source.startswith(REFERENCE)


@dataclass(frozen=True, slots=True)
class Hardware:
    """A candidate's hardware: a device of a lab machine, or a catalog part."""

    key: str
    ref: HardwareRef
    spec: CatalogHardware | None

    @property
    def label(self) -> str:
        if self.ref.owned:
            return f"{self.ref.name} on {self.ref.machine_name} ({self.ref.device})"
        return self.ref.name


class Point(NamedTuple):
    hardware: Hardware
    source: str
    runtime: str
    precision: Precision
    batch_size: int
    threads: int | None
    throughput: float
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    ci_pct: float | None = None
    power_w: float | None = None
    iterations: int | None = None
    systems: int = 1
    variant: str | None = None
    """The model variant measured; None is the original model (published results are all of it)."""


def owned_hardware(session: Session, catalog: dict[str, CatalogHardware]) -> list[Hardware]:
    """Every device of every machine that is not retired."""
    probed: dict[tuple[str, str], CatalogHardware] = {}  # a fleet of one part and one probe: bounded once
    return [_owned(device, catalog, probed) for device in queries.owned_devices(session)]


def _owned(
    device: OwnedDevice, catalog: dict[str, CatalogHardware], probed: dict[tuple[str, str], CatalogHardware]
) -> Hardware:
    """The device with its catalog part, a CPU's peaks bounded by what its probe found (a VM may hide
    its host's AMX or AVX-512: app/catalog/probed.py), looked up in ``probed`` once made."""
    spec = catalog.get(device.catalog_id) if device.catalog_id else None
    if spec is not None and device.isa_features is not None:
        key = (spec.id, device.isa_features)
        if key not in probed:
            probed[key] = as_probed(spec, device.isa_features.split())
        spec = probed[key]
    ref = HardwareRef(
        name=spec.name if spec else device.name,
        kind=DeviceKind(device.kind),
        owned=True,
        catalog_id=device.catalog_id,
        machine_id=device.machine_id,
        machine_name=device.hostname,
        device=device.device_id,
    )
    return Hardware(f"machine:{device.machine_id}/{device.device_id}", ref, spec)


def catalog_hardware(entry: CatalogHardware) -> Hardware:
    kind = DeviceKind.cpu if entry.kind == "cpu" else DeviceKind.cuda
    ref = HardwareRef(name=entry.name, kind=kind, owned=False, catalog_id=entry.id)
    return Hardware(f"catalog:{entry.id}", ref, entry)


def lab_points(session: Session, workload: str, task: Task, owned: list[Hardware]) -> list[Point]:
    """The latest ok result of each config (variants included) on each owned device."""
    by_device = {(h.ref.machine_id, h.ref.device): h for h in owned}
    precisions = {p.value: p for p in Precision}
    rows = queries.lab_measurements(session, workload, task)
    latest: dict[tuple[str, str, str, int, int | None, str | None], Point] = {}
    measured_power = {PowerSource.nvml.value, PowerSource.rapl.value}
    # plain tuples: this loop sees every result of the workload in the fleet (100,000 rows and more)
    for (
        machine_id, device, runtime, precision, batch, threads, throughput,
        p50, p99, ci_low, ci_high, power, power_source, iterations, variant,
    ) in rows:  # fmt: skip
        hardware = by_device.get((machine_id, device))
        if hardware is None or not throughput:
            continue
        latest[(hardware.key, runtime, precision, batch, threads, variant)] = Point(
            hardware,
            LAB,
            runtime,
            precisions[precision],
            batch,
            threads,
            throughput,
            p50,
            p99,
            _ci_pct(ci_low, ci_high, p50),
            power if power_source in measured_power else None,
            iterations,
            variant=variant,
        )
    return list(latest.values())


def _ci_pct(low: float | None, high: float | None, mid: float | None) -> float | None:
    if low is None or high is None or not mid:
        return None
    return (high - low) / 2 / mid * 100


def public_points(session: Session, workload: str, task: Task, catalog: dict[str, CatalogHardware]) -> list[Point]:
    """Published results per device, one point per source, hardware and config (the median of systems);
    a reference run's, one per batch size too."""
    groups: dict[tuple[str, str, str, str, int], list[tuple[float, int, float | None, float | None]]] = defaultdict(
        list
    )
    for r in public_results.all_results(session, workload=workload):
        if r.task is not task or r.hardware_id not in catalog:
            continue
        per_device_power = r.mean_power_w / r.devices if r.mean_power_w else None
        batch = r.batch_size if by_batch(r.source) else 0
        groups[(r.source, r.hardware_id, r.runtime, r.precision.value, batch)].append(
            (r.throughput_samples_per_s / r.devices, r.batch_size, r.latency_p99_ms, per_device_power)
        )
    points = []
    for (source, hardware_id, runtime, precision, _batch), values in groups.items():
        throughputs = [v[0] for v in values]
        latencies = [v[2] for v in values if v[2] is not None]
        powers = [v[3] for v in values if v[3] is not None]
        middle = sorted(values, key=lambda v: v[0])[len(values) // 2]
        spread = (max(throughputs) - min(throughputs)) / 2 / statistics.median(throughputs) * 100
        points.append(
            Point(
                hardware=catalog_hardware(catalog[hardware_id]),
                source=source,
                runtime=runtime,
                precision=Precision(precision),
                batch_size=middle[1],
                threads=None,
                throughput=statistics.median(throughputs),
                latency_p99_ms=statistics.median(latencies) if latencies else None,
                ci_pct=spread if len(values) > 1 else None,
                power_w=statistics.median(powers) if powers else None,
                systems=len(values),
            )
        )
    return points


def machine_device(owned: list[Hardware], machine_id: uuid.UUID, device: str) -> Hardware | None:
    return next((h for h in owned if h.ref.machine_id == machine_id and h.ref.device == device), None)


def lab_scaling(session: Session, catalog: dict[str, CatalogHardware]) -> LabScaling:
    """The lab's data-parallel training runs as evidence of the links they crossed: a run over a
    declared cluster measured its network, a run on one machine its part's NVLink or PCIe. A run on one
    machine's CPU (its ranks share the cores and memory) is no model's link, and a workload without a
    profile has no known gradient size: those are left out."""
    found = queries.lab_parallel_runs(session)
    networks = clusters.network_of(session, {r.cluster for r in found if r.cluster is not None})
    precisions = {p.value: p for p in Precision}
    runs = []
    for r in found:
        precision = precisions[r.precision]
        profile = profile_of(r.workload, Task.train, precision)
        if profile is None:
            continue
        link: scaling.Link | None
        if r.cluster is not None:
            # the declaration gone, nothing says what network the run crossed
            link = scaling.Link("network", networks[r.cluster]) if r.cluster in networks else None
        else:
            link = scaling.ring_link(catalog.get(r.catalog_id) if r.catalog_id else None, r.devices)
        if link is None:
            continue
        runs.append(
            LabRun(
                key=link_key(link, part=r.catalog_id, cluster=r.cluster),
                workload=r.workload,
                precision=precision,
                batch=r.batch_size,
                devices=r.devices,
                throughput=r.throughput_samples_per_s,
                efficiency=r.scaling_efficiency,
                gradient_bytes=scaling.gradient_bytes(profile, precision),
                link_gb_s=link.gb_s,
            )
        )
    return LabScaling.of(runs, scaling.shipped().params) if runs else EMPTY
