"""One CPU core's stream bandwidth per microarchitecture, from the kept language-model runs.

    .venv/bin/python -m benchmarks.core_stream [--write]

Every kept run of benchmarks/llm_cpu.toml, benchmarks/llm_cpu_threads.toml and
benchmarks/llm_prefill_threads.toml (benchmarks/data) starts with ``copy_256mb`` at one thread: one
core's copy bandwidth on that VM. Each run's CPU is named by its CPUID as benchmarks/lab_cpu.py names a
lab VM's generation (a VM is a slice of some part of it), and per catalog architecture the figure is the
median over the VMs that may be it of each VM's median over its runs: a VM weighs once, however many suites
it ran (a slow slice's three runs would have outvoted a faster one's two: Zen 3, session 57). Prints the runs and the
figures; ``--write`` makes app/perfmodel/data/core_stream.json (app/perfmodel/core_stream.py), which
bounds the bandwidth a CPU's few threads get (app/perfmodel/model.py ``scaled``). After writing it,
recalibrate (scripts/calibrate_perfmodel.py, then ``benchmarks.llm_accuracy --write``): the CPU level and
the language model's weights are fitted through it.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from app.catalog import load
from app.contracts import CpuInfo, ResultStatus, RunReport
from app.perfmodel.core_stream import PATH, CoreStream
from benchmarks.lab_cpu import candidates
from benchmarks.llm_accuracy import other_machines

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
WORKLOAD = "copy_256mb"
CALIBRATION_VM = "calibration"
"""The VM of the runs benchmarks/llm_accuracy.py calibrates on (benchmarks/data/llm_*run*.json), which
llm_heldout/machines.json does not list."""

ABOUT = (
    "One CPU core's copy bandwidth (bytes read and written per second, GB/s) per catalog microarchitecture: "
    "what a CPU's threads stream at most, each (app/perfmodel/core_stream.py). The median over the VMs whose "
    f"CPUID may be the architecture of each VM's median over its kept runs' {WORKLOAD} at one thread "
    "(benchmarks/data). "
    "Written by python -m benchmarks.core_stream --write."
)


def kept_runs() -> list[Path]:
    """The kept runs that may hold a one-thread copy: the language-model suites' (other files in those
    folders, such as machines.json, are not runs)."""
    return sorted([*(DATA / "llm_heldout").glob("*.json"), *DATA.glob("llm_*run*.json")])


def one_core_copies() -> list[tuple[str, CpuInfo, float]]:
    """Per kept run with a one-thread copy: its file, its CPU and the copy's GB/s."""
    found = []
    for path in kept_runs():
        raw = json.loads(path.read_text(encoding="utf-8"))
        if "results" not in raw:  # machines.json, which describes the runs
            continue
        report = RunReport.model_validate(raw)
        copies = [
            r.bandwidth_gb_per_s
            for r in report.results
            if r.workload == WORKLOAD and r.threads == 1 and r.status is ResultStatus.ok and r.bandwidth_gb_per_s
        ]
        if copies:
            found.append((path.name, report.machine.cpu, max(copies)))
    return found


@lru_cache(maxsize=1)
def _listed_vms() -> dict[str, str]:
    return {other.run.name: other.vm for other in other_machines()}


def vm_of(run: str) -> str:
    """The VM that made the kept run named ``run``: llm_heldout/machines.json's ``vm`` for the other machines'
    runs, ``CALIBRATION_VM`` for the rest."""
    return _listed_vms().get(run, CALIBRATION_VM)


def measured(copies: list[tuple[str, CpuInfo, float]] | None = None) -> CoreStream:
    """Per catalog architecture, the median over the VMs that may be it of each VM's median one-core copy
    (``one_core_copies``, read here where not given; a run's VM: ``vm_of``)."""
    catalog = load()
    by_architecture: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for name, cpu, gb_s in one_core_copies() if copies is None else copies:
        _, parts = candidates(cpu.vendor or "", cpu.family or 0, cpu.model or 0, catalog, frozenset(cpu.isa_features))
        for architecture in sorted({p.architecture for p in parts if p.architecture}):
            by_architecture[architecture].append((name, gb_s))
    return CoreStream(
        about=ABOUT,
        gb_s={a: round(per_vm_median(runs), 1) for a, runs in sorted(by_architecture.items())},
        runs={a: [n for n, _ in runs] for a, runs in sorted(by_architecture.items())},
    )


def per_vm_median(runs: list[tuple[str, float]]) -> float:
    """The median over the VMs of each VM's median over its ``runs`` (name, GB/s)."""
    by_vm: dict[str, list[float]] = defaultdict(list)
    for name, gb_s in runs:
        by_vm[vm_of(name)].append(gb_s)
    return statistics.median(statistics.median(copies) for copies in by_vm.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {PATH.relative_to(ROOT)}")
    args = parser.parse_args()
    copies = one_core_copies()
    for name, cpu, gb_s in copies:
        print(f"{name}: {cpu.vendor} family {cpu.family} model {cpu.model}, {WORKLOAD} at one thread {gb_s:.1f} GB/s")
    made = measured(copies)
    for architecture, gb_s in made.gb_s.items():
        vms = len({vm_of(run) for run in made.runs[architecture]})
        print(f"{architecture}: {gb_s} GB/s, the median of {vms} VMs' ({len(made.runs[architecture])} runs)")
    if args.write:
        PATH.write_text(json.dumps(made.model_dump(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
