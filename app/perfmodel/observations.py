"""Measurements as the calibration sees them: a profile, a batch, a device, a throughput per device.

Published results are related to the zoo by their real shapes, not by name: a published workload is
used only when the zoo has a workload of that name *with a profile* (the zoo's ``bert_base_squad`` is
BERT-base at sequence 384 with a span head, what NVIDIA's DeepLearningExamples run for Lambda;
``resnet50`` is the same network at 224 pixels). A published source counts samples its own way (GNMT
in tokens) and runs its own stack (NGC containers, DALI, fused optimisers): each source and workload
gets a stack factor of its own, learned with the model (app/perfmodel/calibrate.py).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from app.catalog import CatalogHardware
from app.contracts import Precision, PublicResult, ResultStatus, RunReport, Task
from app.perfmodel.bands import Error, regime
from app.perfmodel.calibrate import Observation, traffic_group
from app.perfmodel.device import device
from app.perfmodel.model import Case, Params, steps
from app.perfmodel.profile import Profile

ProfileOf = Callable[[str, Task, Precision], Profile | None]


def per_sample(unit: str, profile: Profile) -> float:
    """How many of a published unit one sample of the profile is: a GNMT sample (a sentence pair at
    the profile's lengths) is source + target tokens when the source counts tokens; else 1."""
    if unit.startswith("tokens"):
        return float(sum(v for k, v in profile.shape.items() if k.endswith("sequence")) or 1)
    return 1.0


THROUGHPUT_MODE = ("public:openvino",)
"""Published sources whose CPU rows ran OpenVINO's benchmark_app in throughput mode: the CPU plug-in
splits the cores into streams, each running its own requests (batch 1) on its own cores; a network
with little memory pressure (ResNet-50 is one) gets one thread per stream, so a socket of ``cores``
cores runs ``cores`` batch-1 steps at once, at the all-core clock (OpenVINO's CPU plug-in docs,
"Performance Hint and Threads Scheduling"; on this project's 2-vCPU machine the hint chose 2 streams
of 1 thread for ResNet-50)."""


def how_run(source: str, hardware: CatalogHardware) -> tuple[int | None, int]:
    """The threads per step and the steps at once (streams) a published source's rows ran with on
    ``hardware``: ``(None, 1)``, one step on the whole part, unless the source ran a throughput mode."""
    if hardware.kind == "cpu" and hardware.cores and source.startswith(THROUGHPUT_MODE):
        return 1, int(hardware.cores)
    return None, 1


def group_of(source: str, workload: str, task: Task, precision: Precision) -> str:
    """A stack-factor group: one published source's runs of one workload, task and precision (NGC's
    mixed-precision path, with loss scaling and fused optimisers, is not its TF32 path)."""
    return f"{source}/{workload}/{task.value}/{precision.value}"


def from_public(
    results: Iterable[PublicResult], catalog: Mapping[str, CatalogHardware], profile_of: ProfileOf
) -> list[Observation]:
    """The published results the model can use: a zoo profile for the workload, a catalog entry
    with the precision's peak."""
    found: list[Observation] = []
    for r in results:
        task = r.task or Task.train
        profile = profile_of(r.workload, task, r.precision)
        spec = catalog.get(r.hardware_id)
        dev = device(spec, r.precision) if spec is not None else None
        if profile is None or dev is None or spec is None:
            continue
        threads, streams = how_run(r.source, spec)
        found.append(
            Observation(
                profile=profile,
                batch=r.batch_size,
                device=dev,
                throughput=r.throughput_samples_per_s / r.devices / per_sample(r.unit, profile),
                runtime=r.runtime,
                group=group_of(r.source, r.workload, task, r.precision),
                threads=threads,
                label=f"{r.hardware_id} {r.workload}/{task.value} {r.precision.value} ({r.source})",
                streams=streams,
            )
        )
    return found


def from_run(report: RunReport, parts: Mapping[str, CatalogHardware], profile_of: ProfileOf) -> list[Observation]:
    """A lab run's ok results on devices with a catalog part (``parts``: device id -> part), as
    observations of the lab's own stack (no stack factor: they pin the model's absolute level).
    A variant's results are left out: the profiles are of the original models."""
    found: list[Observation] = []
    for r in report.results:
        spec = parts.get(r.device.split(":")[0]) or parts.get(r.device)
        if r.status is not ResultStatus.ok or r.task is None or spec is None or not r.throughput_samples_per_s:
            continue
        if r.variant is not None:
            continue
        profile = profile_of(r.workload, r.task, r.precision)
        dev = device(spec, r.precision)
        if profile is None or dev is None:
            continue
        found.append(
            Observation(
                profile=profile,
                batch=r.batch_size,
                device=dev,
                throughput=r.throughput_samples_per_s,
                runtime=r.runtime,
                group=None,
                threads=r.threads,
                label=f"{spec.id} {r.workload}/{r.task.value} {r.precision.value} {r.runtime} "
                f"batch {r.batch_size} threads {r.threads} (lab {report.machine.hostname})",
            )
        )
    return found


def median_per_part(observations: Sequence[Observation]) -> list[Observation]:
    """Several systems of one part at one config count once, at their median (six H100 hosts are one GPU)."""
    by: dict[tuple[str, str | None, str, str, int], list[Observation]] = defaultdict(list)
    for o in observations:
        by[(o.device.id, o.group, o.profile.workload, o.profile.precision.value, o.batch)].append(o)
    out = []
    for group in by.values():
        middle = sorted(group, key=lambda o: o.throughput)[len(group) // 2]
        median = statistics.median(o.throughput for o in group)
        out.append(
            Observation(
                profile=middle.profile,
                batch=middle.batch,
                device=middle.device,
                throughput=median,
                runtime=middle.runtime,
                group=middle.group,
                threads=middle.threads,
                label=middle.label,
                streams=middle.streams,
            )
        )
    return out


def system_errors(observations: Sequence[Observation], params: Params, traffic: Mapping[str, float]) -> list[Error]:
    """log(other / this) per published result and per other system its source published of the same
    part, workload, precision and batch (Lambda's rows name up to six hosts of one GPU): how far two
    machines of one part run one config, beside the stack that ran them. Each with the regime of its
    step as the model sees it, the stack's ``traffic`` factor in (its group's, 1 where none)."""
    by: dict[tuple[str, str | None, str, str, int], list[Observation]] = defaultdict(list)
    for o in observations:
        by[(o.device.id, o.group, o.profile.workload, o.profile.precision.value, o.batch)].append(o)
    systems = [group for group in by.values() if len(group) > 1]
    cases = [case_of(o, traffic) for o, *_ in systems]
    errors: list[Error] = []
    for group, step in zip(systems, steps(cases, params) if cases else [], strict=True):
        which = regime(step.host_s, step.device_s)
        errors.extend(
            Error(math.log(other.throughput / this.throughput), which)
            for i, this in enumerate(group)
            for j, other in enumerate(group)
            if i != j
        )
    return errors


def case_of(o: Observation, traffic: Mapping[str, float]) -> Case:
    """The step ``o`` measured, as the model takes it: its stack's ``traffic`` factor in (its group's, 1
    where none)."""
    factor = traffic.get(traffic_group(o.group), 1.0) if o.group is not None else 1.0
    return Case(o.profile, o.device, o.batch, o.runtime, o.threads, factor, o.streams)
