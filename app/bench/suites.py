"""Suites are data: TOML files of grids that expand into configs for one machine.

A grid row names workloads, tasks, runtimes, devices, precisions, batch sizes and threads; the
row stands for every combination. Device ``cuda`` means every GPU of the machine (none on a CPU
machine: the row then adds nothing); ``cuda:1`` means that GPU, and is recorded unsupported where
it is missing. Threads: numbers, ``all`` (the CPUs this process may use, which is the default),
or ``scaling`` (1, 2, 4, ... up to the physical cores, then the logical count if SMT adds more).
Primitives (gemm_*, copy_*, h2d_*, d2h_*, allreduce_*) take no task, runtime, batch size or variant.
Variants (``variants = ["none", "int8-static", "pruned-50"]``): ``none`` is the original model; each
other name is a model variant (app/bench/variants), recorded unsupported where it does not apply.

Contexts (``contexts = [128, 1024]``): a language model's prompt (prefill), KV-cache length (decode)
or training sequence, one config each; empty, the workload's own. Other workloads have none.

Device counts (``device_counts = [1, 2]``): a config of N devices runs N data-parallel processes
(app/bench/data_parallel.py) from its device on: ``cuda`` then means the first GPU only, and on
the CPU threads are per process, so ``all`` and ``scaling`` count up to 1/N of the CPUs.
"""

from __future__ import annotations

import itertools
import math
from importlib import resources
from pathlib import Path

from app.bench.config import BenchConfig
from app.bench.primitives import primitives
from app.bench.workloads import workloads
from app.contracts import BUILT_IN_SUITES, ORIGINAL, GridSpec, MachineSpec, SuiteSpec, Task, ThreadSpec
from app.contracts.suites import load_toml
from app.errors import ConfigError


class Suite(SuiteSpec):
    def configs(self, machine: MachineSpec, *, only: str | None = None) -> list[BenchConfig]:
        """Every config of the grid on this machine, in file order, duplicates dropped."""
        seen: dict[BenchConfig, None] = {}
        for row in self.grid:
            for config in expand(row, machine):
                if only is None or config.workload == only:
                    seen.setdefault(config, None)
        return list(seen)


def default_threads(machine: MachineSpec) -> int:
    return max(1, min(machine.cpu.physical_cores, math.floor(machine.cpu.effective_cpus)))


def thread_counts(spec: ThreadSpec, machine: MachineSpec, processes: int = 1) -> list[int]:
    """Threads per process; ``processes`` share the CPUs, so ``all`` and ``scaling`` count their share."""
    if isinstance(spec, int):
        return [spec]
    if spec == "all":
        return [max(1, default_threads(machine) // processes)]
    usable = max(1, math.floor(machine.cpu.effective_cpus) // processes)
    physical = max(1, min(machine.cpu.physical_cores // processes, usable))
    counts = [2**i for i in range(physical.bit_length()) if 2**i <= physical]
    counts += [c for c in (physical, min(machine.cpu.logical_cores // processes, usable)) if c not in counts and c]
    return sorted(counts)


def _devices(spec: str, machine: MachineSpec, count: int) -> list[str]:
    if spec == "cuda":
        gpus = [d.id for d in machine.devices if d.kind.value == "cuda"]
        return gpus[:1] if count > 1 else gpus
    return [spec]


def expand(row: GridSpec, machine: MachineSpec) -> list[BenchConfig]:
    configs = []
    for workload in row.workloads:
        is_primitive = workload in primitives
        tasks: list[Task | None] = [None] if is_primitive else list(row.tasks)
        runtimes = ["torch-eager"] if is_primitive else row.runtimes
        batches = [1] if is_primitive else row.batch_sizes
        contexts: list[int | None] = list(row.contexts) if row.contexts and takes_context(workload) else [None]
        variants = [None] if is_primitive else [None if v == ORIGINAL else v for v in dict.fromkeys(row.variants)]
        for device_spec, count, task, runtime, variant, precision, batch, context in itertools.product(
            row.devices, row.device_counts, tasks, runtimes, variants, row.precisions, batches, contexts
        ):
            for device in _devices(device_spec, machine, count):
                threads: list[int | None] = (
                    [t for spec in row.threads for t in thread_counts(spec, machine, count)]
                    if device == "cpu"
                    else [None]
                )
                for per_process in dict.fromkeys(threads):
                    configs.append(
                        BenchConfig(
                            workload, task, runtime, device, precision, batch, per_process, count, context, variant
                        )
                    )
    return configs


def takes_context(workload: str) -> bool:
    """A language model (it has a prefill task) takes a context; an unknown name is taken to (the
    config is then recorded unsupported with the known names)."""
    return workload not in workloads or Task.prefill.value in workloads.get(workload).info.tasks


BUILT_IN = BUILT_IN_SUITES


def parse_suite(text: str, source: str = "suite") -> Suite:
    try:
        return Suite.model_validate(load_toml(text))
    except ValueError as exc:  # a TOMLDecodeError, too deep a nesting, or not a suite
        raise ConfigError(f"{source} is not a valid suite: {exc}") from exc


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a user's TOML file by path."""
    path = Path(name_or_path)
    if name_or_path in BUILT_IN:
        text = resources.files("app.bench").joinpath(f"suites/{name_or_path}.toml").read_text(encoding="utf-8")
    elif path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        raise ConfigError(
            f"no suite {name_or_path!r}", hint=f"use one of {', '.join(BUILT_IN)} or the path of a suite TOML file"
        )
    return parse_suite(text, f"suite {name_or_path!r}")
