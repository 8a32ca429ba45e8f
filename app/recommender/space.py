"""Which configs to estimate on each piece of hardware: what anything measured, indexed once per ask."""

from __future__ import annotations

import statistics

from app.contracts import DeviceKind, Precision, Task, WorkloadSpec
from app.errors import NotFoundError
from app.perfmodel.predict import profile_of
from app.recommender.estimators import Config
from app.recommender.evidence import LAB, Hardware, Point, by_batch

MODELLED_RUNTIME = "torch-eager"
"""The runtime the model predicts for parts nothing measured: what the profiles were recorded from."""
MODELLED_PRECISIONS = (Precision.fp32, Precision.tf32, Precision.bf16, Precision.fp16)
MODELLED_GPU_BATCHES = (64, 256)
"""Batches a GPU is modelled at besides the workload's defaults: where large batches pay off."""


def modelled_precisions(workload: str, task: Task) -> tuple[Precision, ...]:
    """The precisions the workload has a profile at (those the model can predict anywhere)."""
    return tuple(p for p in MODELLED_PRECISIONS if profile_of(workload, task, p) is not None)


def _default_batches(workload: str) -> tuple[int, ...]:
    from app.bench.workloads import workloads

    try:
        return workloads.get(workload).info.default_batch_sizes
    except NotFoundError:
        return (1,)


class ConfigSpace:
    """The configs anything measured, indexed once per ask (the fleet may be large)."""

    def __init__(
        self, spec: WorkloadSpec, lab: list[Point], public: list[Point], modelled: tuple[Precision, ...] = ()
    ) -> None:
        self.spec = spec
        self.modelled = modelled
        self.batches = (spec.batch_size,) if spec.batch_size else _default_batches(spec.name)
        ran: dict[tuple[DeviceKind, str, Precision], list[Point]] = {}
        for p in lab:
            ran.setdefault((p.hardware.ref.kind, p.runtime, p.precision), []).append(p)
        self.lab: dict[DeviceKind, list[tuple[str, Precision, set[int], set[int | None]]]] = {}
        for (kind, runtime, precision), points in ran.items():
            batches = {spec.batch_size} if spec.batch_size else {p.batch_size for p in points}
            threads = {p.threads for p in points}
            self.lab.setdefault(kind, []).append((runtime, precision, batches, threads))
        self.own_threads: dict[tuple[str, str, Precision], set[int | None]] = {}
        for p in lab:
            self.own_threads.setdefault((p.hardware.key, p.runtime, p.precision), set()).add(p.threads)
        self.public: dict[tuple[str, str, Precision], list[Point]] = {}
        for p in public:
            self.public.setdefault((p.source, p.runtime, p.precision), []).append(p)
        self._cache: dict[tuple[object, ...], list[Config]] = {}
        self.public_batch = {
            key: int(statistics.median(p.batch_size for p in points)) for key, points in self.public.items()
        }

    def configs(self, h: Hardware) -> list[Config]:
        """The configs to estimate on ``h`` (the same for every GPU of a kind the lab owns: cached)."""
        kind = h.ref.kind
        own = tuple(
            (runtime, precision, tuple(sorted(self.own_threads.get((h.key, runtime, precision), ()), key=str)))
            for runtime, precision, _b, _t in self.lab.get(kind, [])
            if kind is DeviceKind.cpu
        )
        key = (kind, h.ref.owned, own, None if h.ref.owned or h.spec is None else h.spec.id)
        if key not in self._cache:
            self._cache[key] = self._configs(h)
        return self._cache[key]

    def _configs(self, h: Hardware) -> list[Config]:
        kind = h.ref.kind
        configs: set[Config] = set()
        for runtime, precision, batches, threads in self.lab.get(kind, []):
            if kind is DeviceKind.cpu:
                threads = self.own_threads.get((h.key, runtime, precision)) or {None}
            configs.update(Config(runtime, precision, b, t) for b in batches for t in threads)
        if not h.ref.owned:
            for (source, runtime, precision), points in self.public.items():
                if points[0].hardware.ref.kind is not kind:
                    continue
                same_part = [
                    p
                    for p in points
                    if h.spec is not None and p.hardware.spec is not None and p.hardware.spec.id == h.spec.id
                ]
                if by_batch(source) and not same_part:
                    continue  # a reference run speaks for other parts through the model's correction
                if by_batch(source):
                    batches = {p.batch_size for p in same_part}
                elif same_part:
                    batches = {same_part[0].batch_size}
                else:
                    batches = {self.public_batch[(source, runtime, precision)]}
                for batch in batches:
                    if self.spec.batch_size is None or self.spec.batch_size == batch:
                        configs.add(Config(runtime, precision, batch, None, source))
        if h.spec is not None:
            batches = set(self.batches) | (
                set(MODELLED_GPU_BATCHES) if kind is not DeviceKind.cpu and not self.spec.batch_size else set()
            )
            measured = {(c.runtime, c.precision, c.batch_size) for c in configs if by_batch(c.source)}
            precisions = [p for p in self.modelled if kind is not DeviceKind.cpu or p is not Precision.tf32]
            configs.update(
                Config(MODELLED_RUNTIME, p, b, None, LAB)
                for p in precisions  # tf32 is a tensor-core format of NVIDIA GPUs: no CPU has it to model
                for b in batches
                if (MODELLED_RUNTIME, p, b) not in measured  # a reference run measured it: no model beside it
            )
        return sorted(configs, key=lambda c: (c.source, c.runtime, c.precision.value, c.batch_size, c.threads or 0))
