"""The lab's own CPU from the catalog alone: this machine's quick-suite model figures, measured, against
what the performance model predicts for the catalog parts this CPU can be.

    .venv/bin/python -m benchmarks.lab_cpu [--report RUN.json | --save RUN.json] [--budget-s 1.5] [--pairs NAME]
                                           [--without NAME]

A virtual machine reports a generic name ("AMD EPYC") that matches no catalog entry, by design: the
vendor's family and model numbers say which generation it is (AMD family 26 model 2 is Zen 5 "Turin",
the EPYC 9005 series), not which of its SKUs, and a slice of a few vCPUs is not the whole part. So the
honest comparison is against every server part of that generation: each predicted at the threads the
config ran with (compute scales with the cores used, bandwidth four times faster up to what those cores
stream on their own: app/perfmodel/model.py ``scaled``), and the measured figure set beside the range of
their predictions and their median. The model's CPU calibration is OpenVINO's published server figures
and the lab machines in app/perfmodel/data/cpu_runtime_pairs.json: their absolute figures set the CPU level
(app/perfmodel/lab_levels.py), their eager / ONNX Runtime ratios the eager kernel factors; ``--pairs NAME``
prints this machine's entry for that file. A machine of a generation the file has is not held out here:
benchmarks/accuracy.py holds each machine out, its fifth test for the ratios and its sixth for the level.

Measures the quick suite's CPU configs of zoo workloads (about a minute on 2 cores), or reads them from
a RunReport (``hwadvisor bench --out RUN.json``, or ``--save`` here: one measurement compared under two
versions of the model), which is compared against the CPU it was measured on (its probe's identity and
flags), on any machine. On a shared machine single timings swing by tens of percent: read the ratios as such.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from app.catalog import CatalogHardware, load
from app.catalog.probed import as_probed, bounded
from app.contracts import LLM_PRESETS, Precision, Result, ResultStatus, RunReport, Task
from app.perfmodel import lab_levels
from app.perfmodel.device import device, runs_on_tiles
from app.perfmodel.generation import shipped as llm_calibration
from app.perfmodel.model import EAGER_RUNTIME, dispatch_of
from app.perfmodel.predict import band_of, predict
from app.perfmodel.profile import TENSOR_CLASSES, shipped
from app.perfmodel.runtime_pairs import Machine, Pair
from app.perfmodel.runtime_pairs import shipped as shipped_pairs
from benchmarks.accuracy import openvino_rows
from benchmarks.llm_accuracy import result_step

GENERATIONS: tuple[tuple[str, int, range, str, str], ...] = (
    # vendor, family, models, generation, the server parts' names in the catalog
    ("AuthenticAMD", 23, range(0x00, 0x10), "Zen", r"EPYC 7\d\d1"),
    ("AuthenticAMD", 23, range(0x30, 0x40), "Zen 2", r"EPYC 7\d\d2"),
    ("AuthenticAMD", 25, range(0x00, 0x10), "Zen 3", r"EPYC 7\d\d3"),
    ("AuthenticAMD", 25, range(0x10, 0x20), "Zen 4", r"EPYC 9\d\d4"),
    ("AuthenticAMD", 25, range(0xA0, 0xB0), "Zen 4c", r"EPYC (97\d4|8\d\d4)"),
    ("AuthenticAMD", 26, range(0x00, 0x10), "Zen 5", r"EPYC 9\d\d5"),
    ("AuthenticAMD", 26, range(0x10, 0x20), "Zen 5c", r"EPYC 9\d\d5"),
)
"""CPUID family and model -> generation (AMD's revision guides)."""

INTEL_GENERATIONS: tuple[tuple[range, tuple[str, ...]], ...] = (
    # family 6 models (Intel's SDM) -> the catalog's architecture names
    (range(0x6A, 0x6B), ("Ice Lake-SP",)),
    (range(0x8F, 0x90), ("Sapphire Rapids",)),
    (range(0xCF, 0xD0), ("Emerald Rapids",)),
    (range(0xAD, 0xAF), ("Granite Rapids",)),
)
AMX_SERVER = ("Sapphire Rapids", "Emerald Rapids", "Granite Rapids")
"""The Xeons with AMX: where a hypervisor reports a model number no Xeon has, the instruction set
still says the generation is one of these (server parts of their P-cores, every SKU)."""


def cpu_flags(text: str) -> frozenset[str]:
    """The first processor's flags from /proc/cpuinfo."""
    found = re.search(r"^flags\s*:\s*(.*)$", text, re.MULTILINE)
    return frozenset(found.group(1).split()) if found else frozenset()


def cpu_identity(text: str) -> tuple[str, int, int, str]:
    """vendor, family, model and model name from /proc/cpuinfo."""

    def field(name: str) -> str:
        found = re.search(rf"^{name}\s*:\s*(.*)$", text, re.MULTILINE)
        return found.group(1).strip() if found else ""

    return field("vendor_id"), int(field("cpu family") or 0), int(field("model") or 0), field("model name")


def identity(report: RunReport | None) -> tuple[str, int, int, str, frozenset[str], int]:
    """Vendor, family, model, model name, ISA flags and vCPUs of the CPU to compare: the one ``report`` was
    measured on (its probe's), else this machine's (/proc/cpuinfo), so that a saved run reads the same
    anywhere."""
    if report is not None:
        cpu = report.machine.cpu
        found = (cpu.vendor or "", cpu.family or 0, cpu.model or 0, cpu.model_name)
        return (*found, frozenset(cpu.isa_features), cpu.logical_cores)
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    return (*cpu_identity(cpuinfo), cpu_flags(cpuinfo), os.cpu_count() or 1)


def candidates(
    vendor: str, family: int, model: int, catalog: Sequence[CatalogHardware], flags: frozenset[str] = frozenset()
) -> tuple[str, list[CatalogHardware]]:
    """The generation and the catalog's server parts of it (none when the CPU is not known here)."""
    if vendor == "GenuineIntel" and family == 6:
        known = next((names for models, names in INTEL_GENERATIONS if model in models), None)
        generation = " / ".join(known) if known else ""
        if known is None and "amx_tile" in flags:
            known, generation = AMX_SERVER, f"model {model} is no Xeon's; AMX: {' / '.join(AMX_SERVER)}"
        server = [h for h in catalog if h.kind == "cpu" and h.architecture in (known or ()) and "Xeon" in h.name]
        return (generation, server) if known else ("unknown", [])
    for v, f, models, generation, names in GENERATIONS:
        if (v, f) == (vendor, family) and model in models:
            parts = [
                h for h in catalog if h.kind == "cpu" and h.architecture == generation and re.search(names, h.name)
            ]
            return generation, parts
    return "unknown", []


def measure(budget_s: float) -> RunReport:
    """The quick suite's CPU configs of zoo workloads, measured here."""
    from app import __version__
    from app.bench.runner import run_config
    from app.bench.suites import load_suite
    from app.contracts import MeasureSpec
    from app.probes import probe_machine

    machine = probe_machine()
    zoo = {workload for workload, _task, _precision in shipped()}
    spec = MeasureSpec(time_budget_s=budget_s, warmup_budget_s=budget_s, target_ci=0.02)
    configs = [c for c in load_suite("quick").configs(machine) if c.device == "cpu" and c.workload in zoo]
    started = datetime.now(UTC)
    results = [run_config(c, machine, spec) for c in configs]
    return RunReport(
        run_id=uuid.uuid4(),
        suite="quick",
        started_at=started,
        finished_at=datetime.now(UTC),
        agent_version=__version__,
        machine=machine,
        results=results,
    )


def modelled(result: Result, part: CatalogHardware, threads: int) -> float | None:
    """The model's samples/s for ``result``'s config on ``part``: a language model's at the context it
    ran with (the quick suite's is short), through the generation model as plan-serving asks it."""
    assert result.task is not None
    if result.workload in LLM_PRESETS and result.context_tokens:
        found = result_step(result, part, threads=threads)
        return result.batch_size / found.seconds if found is not None else None
    guess = predict(
        result.workload,
        result.task,
        result.precision,
        result.batch_size,
        part,
        runtime=result.runtime,
        threads=threads,
    )
    return guess.throughput if guess is not None else None


def band(r: Result, parts: Sequence[CatalogHardware], threads: int) -> float:
    """The band (log units) the model's figure for ``r``'s config carries: a language model's step its own
    (the generation model's calibration, app/perfmodel/generation.py); a zoo workload's, in a runtime whose
    CPU level the lab's figures set and at a precision on the units they measured (not AMX's tiles), the
    lab level's; else the uncalibrated model's."""
    if r.task in (Task.prefill, Task.decode):
        found = result_step(r, parts[0], threads=threads)
        return found.band if found is not None else band_of("cpu-uncalibrated")
    unit = "tile" if runs_on_tiles(parts, r.precision) else None
    return band_of(lab_levels.BAND if lab_levels.levelled("cpu", r.runtime, unit) else "cpu-uncalibrated")


def compare(
    results: Sequence[Result], parts: Sequence[CatalogHardware], threads: int
) -> list[tuple[str, float, list[float], float]]:
    """(config, measured samples/s, each part's prediction, the band the figure carries) for every ok
    result the model covers."""
    rows = []
    for r in results:
        if r.status is not ResultStatus.ok or r.task is None or not r.throughput_samples_per_s:
            continue
        used = r.threads or threads
        predicted = [found for part in parts if (found := modelled(r, part, used)) is not None]
        if predicted:
            context = f" context {r.context_tokens}" if r.context_tokens else ""
            config = f"{r.runtime} {r.precision.value} batch {r.batch_size}{context} threads {used}"
            label = f"{r.workload}/{r.task.value} {config}"
            rows.append((label, r.throughput_samples_per_s, predicted, band(r, parts, used)))
    return rows


def pairs_entry(name: str, cpu: str, parts: Sequence[CatalogHardware], report: RunReport) -> dict[str, object]:
    """This machine's entry for app/perfmodel/data/cpu_runtime_pairs.json."""
    return this_machine(name, cpu, parts, report).model_dump(mode="json")


def this_machine(name: str, cpu: str, parts: Sequence[CatalogHardware], report: RunReport) -> Machine:
    """This machine as the pairs file describes one: every config measured under both torch-eager and a
    graph runtime (app/perfmodel/runtime_pairs.py)."""
    ok = {
        (r.workload, r.task, r.precision, r.batch_size, r.threads, r.runtime): r.throughput_samples_per_s
        for r in report.results
        if r.status is ResultStatus.ok and r.task is not None and r.throughput_samples_per_s and r.threads
    }
    pairs = [
        Pair(
            workload=workload,
            task=task,
            precision=precision,
            batch=batch,
            threads=threads,
            eager=eager,
            graph_runtime=runtime,
            graph=graph,
        )
        for (workload, task, precision, batch, threads, runtime), graph in ok.items()
        if dispatch_of(runtime) == "graph"
        and (eager := ok.get((workload, task, precision, batch, threads, EAGER_RUNTIME))) is not None
    ]
    names = next((n for *_, g, n in GENERATIONS if any(p.architecture == g for p in parts)), "Xeon")
    return Machine(
        name=name,
        cpu=cpu,
        architectures=sorted({p.architecture for p in parts if p.architecture}),
        names=names,
        measured=f"{report.started_at:%Y-%m-%d}, benchmarks.lab_cpu",
        pairs=pairs,
    )


def held_out(machine: Machine, without: str, out: Callable[[str], None]) -> None:
    """``machine``'s eager and graph-runtime figures by the lab level calibrated on OpenVINO's rows and the
    pairs file's machines but ``without`` (this machine's generation's entry, say): a held-out check on a
    machine of a generation the file has."""
    machines = shipped_pairs().machines
    if without not in {m.name for m in machines}:
        raise SystemExit(f"no machine {without!r} in the pairs file: one of {', '.join(m.name for m in machines)}")
    catalog = load()
    others = [m for m in machines if m.name != without]
    fitted = lab_levels.calibrated(openvino_rows({e.id: e for e in catalog}), others, catalog)
    found = lab_levels.figures(fitted, machine, catalog)
    out("")
    out(f"# This machine's eager and graph-runtime figures, the lab level calibrated without {without}")
    for f in found:
        out(f"{f.config}: measured {f.measured:,.1f}/s, model {f.predicted:,.1f}/s, {f.predicted / f.measured:.2f}x")
    if found:
        logs = [math.log(f.predicted / f.measured) for f in found]
        out(
            f"{len(found)} figures: mean abs log error {statistics.fmean(abs(x) for x in logs):.2f}, "
            f"mean log error {statistics.fmean(logs):+.2f}"
        )


def outrun(results: Sequence[Result], parts: Sequence[CatalogHardware], threads: int) -> str | None:
    """A note when this machine's matrix work ran faster than any part of its generation can at
    ``threads`` cores and the part's highest clock: the CPUID is then a hypervisor's generic model over
    a newer host (QEMU's "EPYC" is Naples' feature set), and the catalog level cannot be this machine's."""
    fastest = max((part_peak(p, threads) for p in parts), default=0.0)
    best = 0.0
    for r in results:
        if r.task is None or r.workload in LLM_PRESETS:  # a language model's profile is at another context
            continue
        if r.precision is not Precision.fp32:  # the peak it is held to is the FP32 FMAs'
            continue
        profile = shipped().get((r.workload, r.task, r.precision))
        if r.status is ResultStatus.ok and profile is not None and r.throughput_samples_per_s:
            matrix = sum(b.flops.at(r.batch_size) for b in profile.buckets if b.op_class in TENSOR_CLASSES)
            best = max(best, matrix * r.throughput_samples_per_s / r.batch_size)
    if fastest and best > fastest:
        return (
            f"this machine ran matrix work at {best / 1e9:,.0f} GFLOP/s, more than any part of the generation "
            f"its CPUID names can at {threads} cores and its highest clock ({fastest / 1e9:,.0f}): the CPUID is a "
            "hypervisor's generic model, and the model's level cannot be this machine's (its ratios still are)"
        )
    return None


def part_peak(part: CatalogHardware, threads: int) -> float:
    """FP32 FLOP/s of ``threads`` of the part's cores at its highest clock."""
    dev = device(part, Precision.fp32)
    if dev is None:
        return 0.0
    return dev.matrix / dev.units * min(threads, dev.units) * dev.turbo


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", type=Path, help="read the results from this RunReport instead of measuring")
    parser.add_argument("--save", type=Path, help="write what was measured to this RunReport (for --report)")
    parser.add_argument("--budget-s", type=float, default=1.5, help="sampling and warm-up budget per config")
    parser.add_argument("--pairs", metavar="NAME", help="print this machine's cpu_runtime_pairs.json entry")
    parser.add_argument(
        "--without",
        metavar="NAME",
        help="also predict this machine's eager and ONNX Runtime figures by the lab level calibrated without "
        "the pairs file's machine NAME (its generation's entry: a held-out check)",
    )
    args = parser.parse_args(argv)
    read = RunReport.model_validate_json(args.report.read_text(encoding="utf-8")) if args.report else None
    vendor, family, model, name, flags, threads = identity(read)
    generation, parts = candidates(vendor, family, model, load(), flags)
    whose = "The report's CPU" if read else "This CPU"
    out(f"# {whose}: {name!r}, {vendor} family {family} model {model} ({generation}), {threads} vCPUs")
    if not parts:
        out("no catalog generation for this CPU: nothing to compare (add it to GENERATIONS)")
        return
    out(f"catalog parts of that generation: {len(parts)} ({', '.join(sorted(p.id for p in parts))})")
    report = read or measure(args.budget_s)
    if args.save:
        args.save.write_text(report.model_dump_json(indent=1), encoding="utf-8")
    described = f"{name}, {vendor} family {family} model {model} ({generation})"
    if args.pairs:
        out(json.dumps(pairs_entry(args.pairs, described, parts, report), indent=1))
    # predicted with the peaks the CPU's instructions reach (a VM may hide AMX or AVX-512)
    probed = [as_probed(p, flags) for p in parts]
    if said := sorted({b for p in probed for b in bounded(p)}):
        out(f"peaks bounded by the CPU's flags (app/catalog/probed.py): {'; '.join(said)}")
    rows = compare(report.results, probed, threads)
    level, alone = band_of(lab_levels.BAND, "cpu-uncalibrated"), band_of("cpu-uncalibrated")
    steps = llm_calibration()
    out("")
    out("| config | measured /s | model, median part /s | model, range over parts /s | median / measured |")
    out("|---|---|---|---|---|")
    logs = []
    inside = 0
    for label, measured, predicted, carried in rows:
        middle = statistics.median(predicted)
        logs.append(abs(math.log(middle / measured)))
        held = min(predicted) / math.exp(carried) <= measured <= max(predicted) * math.exp(carried)
        inside += held
        out(
            f"| {label} | {measured:,.1f} | {middle:,.1f} | {min(predicted):,.1f} - {max(predicted):,.1f} "
            f"| {middle / measured:.2f}{'' if held else ' (outside the band)'} |"
        )
    if note := outrun(report.results, probed, threads):
        out("")
        out(f"note: {note}")
    if rows:
        typical = math.exp(statistics.fmean(logs)) - 1
        out("")
        out(
            f"median part: mean abs log error {statistics.fmean(logs):.2f} (x/÷{1 + typical:.2f}); "
            f"{inside}/{len(rows)} measured figures inside the parts' range widened by the band each figure has: "
            f"the lab level's (x/÷{math.exp(level):.2f}) for eager PyTorch and the graph runtimes on the vector "
            f"units, the language model's own for its steps (x/÷{math.exp(steps.band('cpu', Task.prefill)[0]):.2f} "
            f"prefill, x/÷{math.exp(steps.band('cpu', Task.decode)[0]):.2f} decode), the uncalibrated model's "
            f"(x/÷{math.exp(alone):.1f}) for AMX's precisions"
        )
    if args.without:
        held_out(this_machine("this machine", described, parts, report), args.without, out)


if __name__ == "__main__":
    main()
