"""How well prefill and decode are predicted on this machine's measured presets, one preset held out.

    .venv/bin/python -m app bench --suite benchmarks/llm_cpu.toml --out benchmarks/data/llm_cpu_run.json
    .venv/bin/python -m benchmarks.llm_accuracy [--run FILE ...] [--markdown] [--write [--out FILE]]

The run (benchmarks/llm_cpu.toml) measures three presets' prefill and decode through the real runner,
and the machine's memory bandwidth (copy_256mb). On a machine others share, run it several times
(one file each): per config the fastest median of the rounds is taken as what the machine does
(another process's load only ever slows a step), and the spread between rounds is printed. The
machine is described as the catalog describes a CPU (docs/ARCHITECTURE.md): its peaks by the
architecture's rule, cores x clock x FLOP per cycle (app/catalog/curated/cpu_architectures.toml,
``--flop-per-cycle``, Zen 5's by default; the clock the run reports, else the one ``benchmarks.cpu_clock``
measured on such a VM, ``CLOCK_GHZ``), and, since a virtual machine's share of the memory system is in
no datasheet, the bandwidth it measured.

For each preset held out, the calibration of app/perfmodel/generation.py is fitted on the other presets'
results and the held-out preset's results are predicted: per task and precision, the measured step as a
non-negative sum of the modelled step's parts (compute, weights, KV cache, the rest; a decode's compute
weight the prefill's at its precision, ``generation.COMPUTE``), or one factor per task (measured /
modelled step time, geometric mean) where a precision has too few results. Printed beside it, from the
same figures: one factor per task for everything (the first calibration), the roofline alone (prefill:
the GEMM FLOPs at the peak; decode: weights + KV cache at the bandwidth) and the device model
uncalibrated. Then the GPUs: hwadvisor's reference runs' settled prefill and decode
(app/catalog/data/reference/), too few to weigh the parts apart, give one factor per task (each result
beside the factor of the task's other results, held out), with a band no narrower than ``gpu-transfer``
(the factor is one part's, carried to the others as a reference run's ratio is). ``--write`` stores the
calibration fitted on every preset and every GPU result, and the bands (CPU: 90% of the held-out absolute
log errors, and no narrower than 90% of what the calibration errs by on the other machines' runs,
benchmarks/data/llm_heldout/machines.json, each machine described by rule: a catalog part's figure is
never the calibration machine's own), in app/perfmodel/data/llm.json. A vendor other than the calibration
machine's with three machines or more there gets weights of its own for a task and precision where, each
of its machines held out, weights fitted on the others predict it better than the shared ones
(``vendor_weights``; the table "vendor" says which); its machines' errors in the bands are then those
held-out predictions'."""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.catalog import CatalogHardware, get, reference
from app.catalog.probed import vector_isa
from app.contracts import LLM_PRESETS, Precision, ReferenceRun, Result, ResultStatus, RunReport, Task
from app.perfmodel import generation, llm
from app.perfmodel.device import matrix_unit
from app.perfmodel.predict import band_of

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "benchmarks" / "data").glob("llm_cpu_run*.json"))
OTHER_MACHINES = ROOT / "benchmarks" / "data" / "llm_heldout" / "machines.json"
"""Runs of other machines than the calibration's, each with how to describe its machine: what a band must
hold, since a catalog part's figure is never the calibration machine's own."""
OUT = ROOT / "app" / "perfmodel" / "data" / "llm.json"
TASKS = (Task.prefill, Task.decode)
ZEN5 = {"fp32": 64.0, "bf16": 128.0, "int8": 256.0}
CLOCK_GHZ = 4.2
"""The clock a run's machine is described at when the run reports none, as a VM's guest does not (its
``cpu MHz`` is the TSC's 2.6 GHz): this project's Zen 5 VM (family 26 model 2, the family and model of
the shipped runs' VMs) held 4.17-4.31 GHz on one busy core over four runs of ``benchmarks.cpu_clock``
(2026-11-29). Until session 32 the machine was described at 2.6 GHz, which the calibration's compute
weights made up for (fp32 prefill 0.35 where it is 0.57 at the measured clock) and which then made every
catalog part's step, at its own turbo clock, 1.6x too fast (docs/ACCURACY.md)."""


def machine_options(parser: argparse.ArgumentParser) -> None:
    """The options that say how a run's machine is described (``described``)."""
    parser.add_argument(
        "--clock-ghz", type=float, default=None, help=f"the cores' clock; default: the run's, else {CLOCK_GHZ}"
    )
    parser.add_argument("--flop-per-cycle", default=None, help='JSON, e.g. {"fp32": 64, "bf16": 128} (Zen 5)')


def described(report: RunReport, results: list[Result], args: argparse.Namespace) -> tuple[float, CatalogHardware]:
    """The clock ``report``'s machine is described at and the machine as a catalog entry
    (``machine_part``), as ``machine_options`` asked."""
    clock = machine_clock(report, args.clock_ghz)
    per_cycle = json.loads(args.flop_per_cycle) if args.flop_per_cycle else ZEN5
    return clock, machine_part(report, results, clock, per_cycle)


def machine_clock(report: RunReport, asked: float | None) -> float:
    """The clock (GHz) to describe ``report``'s machine at: ``asked``, else the run's base (or highest)
    clock, else CLOCK_GHZ."""
    cpu = report.machine.cpu
    return asked or ((cpu.base_mhz or cpu.max_mhz or 0.0) / 1000) or CLOCK_GHZ


@dataclass(frozen=True, slots=True)
class Case:
    result: Result
    measured_s: float
    modelled_s: float
    roofline_s: float
    parts: list[float]
    """The modelled step in generation.COMPONENTS."""
    vendor: str
    """The machine's vendor as the catalog names it (``generation.catalog_vendor``)."""
    tiles: bool = False
    """Whether its precision runs on the machine's tile units (AMX: app/perfmodel/device.py ``matrix_unit``)."""

    @property
    def preset(self) -> str:
        return self.result.workload

    @property
    def task(self) -> Task:
        assert self.result.task is not None
        return self.result.task

    @property
    def key(self) -> str:
        """The calibration's key for this step's weights: '<kind>/<task>/<precision>' (a CPU's)."""
        return f"cpu/{self.task.value}/{self.result.precision.value}"


def machine_part(
    report: RunReport, results: list[Result], clock_ghz: float, per_cycle: dict[str, float]
) -> CatalogHardware:
    """This machine as a catalog CPU entry: rule peaks at ``clock_ghz``, the measured bandwidth, its cores,
    L3 and instruction set (its vendor and clock also say what share of the peak PyTorch's BLAS reaches on it,
    app/perfmodel/device.py ``blas_share``). The bandwidth is one thread's copy, as the rule's machine streams
    at every thread count: a run that also copied at more threads (benchmarks/llm_prefill_threads.toml)
    is described as one that did not."""
    copies = [
        r for r in results if r.workload.startswith("copy_") and r.status is ResultStatus.ok and (r.threads or 1) == 1
    ]
    if not copies or copies[0].bandwidth_gb_per_s is None:
        raise SystemExit("the run has no copy_256mb result at one thread: measure it with benchmarks/llm_cpu.toml")
    cpu = report.machine.cpu
    cores = float(cpu.physical_cores)
    return CatalogHardware(
        id="this-machine",
        kind="cpu",
        vendor=cpu.vendor or "unknown",
        name=f"{cpu.model_name} ({cores:g} cores, this machine)",
        peak_fp32_tflops=cores * clock_ghz * per_cycle["fp32"] / 1000,
        peak_bf16_tflops=cores * clock_ghz * per_cycle["bf16"] / 1000,
        memory_bandwidth_gb_s=max(r.bandwidth_gb_per_s or 0.0 for r in copies),
        l3_mb=(cpu.l3_kib or 0) / 1024 or None,
        cores=cores,
        base_ghz=clock_ghz,
        isa=vector_isa(cpu.isa_features),
    )


def roofline_s(result: Result, part: CatalogHardware) -> float:
    """The naive figure: prefill's GEMM FLOPs at the precision's peak (for the threads used), decode's
    weights and KV cache at the bandwidth."""
    assert result.task is not None and result.context_tokens is not None
    shape = LLM_PRESETS[result.workload].shape
    share = (result.threads or part.cores or 1) / (part.cores or 1)
    if result.task is Task.prefill:
        peak = (part.peak_bf16_tflops if result.precision is Precision.bf16 else part.peak_fp32_tflops) or 0.0
        head = shape.vocabulary * shape.hidden
        flops = 2 * ((shape.matmul_parameters - head) * result.context_tokens + head) * result.batch_size
        return flops / (peak * 1e12 * share)
    size = llm.ACTIVATION_BYTES[result.precision]
    moved = llm.weights_bytes(shape, result.precision) + shape.kv_cache_bytes(
        result.context_tokens + 1, result.batch_size, size
    )
    return moved / ((part.memory_bandwidth_gb_s or 0.0) * 1e9)


def fastest(reports: list[RunReport]) -> tuple[list[Result], dict[tuple[object, ...], float]]:
    """Per config, the result with the fastest median over the rounds, and the rounds' spread (slowest
    median over fastest)."""
    by: dict[tuple[object, ...], list[Result]] = defaultdict(list)
    for report in reports:
        for r in report.results:
            if r.status is ResultStatus.ok and r.latency_p50_ms is not None:
                key = (r.workload, r.task, r.precision, r.batch_size, r.context_tokens, r.threads, r.runtime)
                by[key].append(r)
    best = [min(rs, key=lambda r: r.latency_p50_ms or math.inf) for rs in by.values()]
    spread = {
        k: max(r.latency_p50_ms or 0 for r in rs) / min(r.latency_p50_ms or math.inf for r in rs)
        for k, rs in by.items()
    }
    return best, spread


def result_step(
    result: Result,
    part: CatalogHardware,
    *,
    threads: int | None,
    llm_calibration: generation.LlmCalibration | None = None,
) -> generation.Step | None:
    """The generation model's step for a measured language-model result's config on ``part``, at
    ``threads`` and its own context (``llm_calibration``: the shipped one when not given)."""
    assert result.task is not None and result.context_tokens is not None
    return generation.step(
        LLM_PRESETS[result.workload].shape,
        result.task,
        result.precision,
        result.batch_size,
        result.context_tokens,
        part,
        runtime=result.runtime,
        threads=threads,
        llm_calibration=llm_calibration,
    )


def cases(results: list[Result], part: CatalogHardware) -> list[Case]:
    found = []
    vendor = generation.catalog_vendor(part.vendor)
    for r in results:
        if r.status is not ResultStatus.ok or r.task not in TASKS or r.latency_p50_ms is None:
            continue
        step = result_step(r, part, threads=r.threads, llm_calibration=generation.LlmCalibration())
        assert step is not None
        tiles = matrix_unit(part, r.precision) == "tile"
        found.append(Case(r, r.latency_p50_ms / 1000, step.seconds, roofline_s(r, part), step.parts, vendor, tiles))
    return found


def language_runs() -> list[tuple[ReferenceRun, list[Result]]]:
    """Each of hwadvisor's GPU reference runs that measured a language model, with the prefill and decode
    results it measured once its GPU had settled."""
    found = []
    for run in reference.shipped():
        settled = [e.result for e in run.results if e.settled and e.result.workload in LLM_PRESETS]
        if settled:
            found.append((run, settled))
    return found


def reference_cases(runs: list[tuple[ReferenceRun, list[Result]]]) -> list[Case]:
    """The runs' language-model steps, each beside the uncalibrated model's step on the run's catalog part."""
    return [c for run, settled in runs for c in cases(settled, get(run.hardware_id))]


def gpu_calibration(of: list[Case]) -> tuple[dict[str, float], dict[str, float], dict[str, list[float]]]:
    """What the GPU reference runs teach: one factor per task (too few results to weigh the parts apart),
    its band, and each case's held-out log error (the case predicted by the task's other cases' factor).
    The band is never narrower than ``gpu-transfer``: the factor is one part's, carried to the others as a
    reference run's ratio is for the zoo's workloads."""
    factors, bands, held = {}, {}, {}
    for task in TASKS:
        group = [c for c in of if c.task is task]
        if not group:
            continue
        factors[f"gpu/{task.value}"] = round(factor(group), 4)
        others = [(c, [o for o in group if o is not c]) for c in group] if len(group) > 1 else []
        errors = [abs(math.log(c.modelled_s * factor(rest) / c.measured_s)) for c, rest in others]
        held[task.value] = errors
        bands[f"gpu/{task.value}"] = round(max([band_of("gpu-transfer"), *errors]), 4)
    return factors, bands, held


def factor(of: list[Case]) -> float:
    """Measured over modelled step time, geometric mean (1 with nothing to fit on)."""
    return math.exp(statistics.fmean(math.log(c.measured_s / c.modelled_s) for c in of)) if of else 1.0


def calibration(of: list[Case], host_from: generation.LlmCalibration | None = None) -> generation.LlmCalibration:
    """What ``of`` teach the CPU's calibration: the parts weighed apart per task and precision with
    enough results (the host part held at ``host_from``'s weight where given: a vendor's own weights),
    one factor per task."""
    weights: dict[str, list[float]] = {}
    compute: dict[Precision, float] = {}
    for task in TASKS:  # prefill first: its compute weight is the decode's (``generation.COMPUTE``)
        for precision in sorted({c.result.precision for c in of if c.task is task}):
            group = [c for c in of if c.task is task and c.result.precision is precision]
            key = group[0].key
            shared = host_from.weights.get(key) if host_from else None
            if len(group) >= generation.MIN_FIT and (host_from is None or shared is not None):
                fixed = {generation.HOST: shared[generation.HOST]} if shared else {}
                if task is Task.decode and precision in compute:
                    fixed[generation.COMPUTE] = compute[precision]
                fitted = generation.fit_weights([c.parts for c in group], [c.measured_s for c in group], fixed)
                weights[key] = [round(w, 4) for w in fitted]
                if task is Task.prefill:
                    compute[precision] = weights[key][generation.COMPUTE]
    factors = {f"cpu/{t.value}": round(factor([c for c in of if c.task is t]), 4) for t in TASKS}
    return generation.LlmCalibration(factors=factors, weights=weights)


def predicted(tuned: generation.LlmCalibration, c: Case) -> float:
    assert c.result.task is not None
    return tuned.seconds(
        "cpu", c.result.task, c.result.precision, c.parts, c.modelled_s, vendor=c.vendor, tiles=c.tiles
    )


def held_out(all_cases: list[Case]) -> dict[str, list[tuple[Case, float, float]]]:
    """Per preset: its cases with the prediction made from the other presets' calibration, and with
    the other presets' one factor for the task."""
    out: dict[str, list[tuple[Case, float, float]]] = defaultdict(list)
    for preset in sorted({c.preset for c in all_cases}):
        others = [c for c in all_cases if c.preset != preset]
        tuned = calibration(others)
        for c in all_cases:
            if c.preset == preset:
                out[preset].append(
                    (c, predicted(tuned, c), c.modelled_s * factor([o for o in others if o.task is c.task]))
                )
    return out


@dataclass(frozen=True, slots=True)
class OtherMachine:
    """A run of another machine (benchmarks/llm_cpu.toml or llm_cpu_threads.toml), described by rule: its
    cores' clock (``benchmarks.cpu_clock``) and FP32 / BF16 FLOPs per cycle, with its measured bandwidth."""

    run: Path
    vm: str
    """Which machine: a VM's runs (one of each suite) share it."""
    clock_ghz: float
    flop_per_cycle: dict[str, float]


def other_machines(path: Path = OTHER_MACHINES) -> list[OtherMachine]:
    """The other machines' runs that ``path`` lists (none where it does not exist)."""
    if not path.exists():
        return []
    listed = json.loads(path.read_text(encoding="utf-8"))["runs"]
    return [
        OtherMachine(
            path.parent / entry["run"], str(entry["vm"]), float(entry["clock_ghz"]), dict(entry["flop_per_cycle"])
        )
        for entry in listed
    ]


def other_cases(skip: list[Path]) -> dict[str, list[Case]]:
    """Per other machine (``OtherMachine.vm``), the steps its runs measured (a run in ``skip``, one being
    fitted on, left out), each beside the uncalibrated model's on the machine described by rule."""
    found: dict[str, list[Case]] = defaultdict(list)
    fitted_on = {path.resolve() for path in skip}
    for other in other_machines():
        if other.run.resolve() in fitted_on:
            continue
        report = RunReport.model_validate_json(other.run.read_text(encoding="utf-8"))
        results, _spread = fastest([report])
        found[other.vm] += cases(results, machine_part(report, results, other.clock_ghz, other.flop_per_cycle))
    return found


def other_machine_errors(
    tuned: generation.LlmCalibration,
    by_vm: dict[str, list[Case]],
    held_out: dict[str, generation.LlmCalibration] | None = None,
) -> dict[Task, list[float]]:
    """Each step the other machines measured (``by_vm``, as ``other_cases`` gives them), predicted with
    ``tuned`` (or, for a machine ``held_out`` names, with the calibration it gives that machine: one fitted
    without it) on its machine described by rule: the absolute log errors of a calibration carried to a
    machine it never saw."""
    logs: dict[Task, list[float]] = defaultdict(list)
    for vm, found in by_vm.items():
        carried = (held_out or {}).get(vm, tuned)
        for c in found:
            logs[c.task].append(abs(math.log(predicted(carried, c) / c.measured_s)))
    return logs


MIN_MACHINES = 3
"""A vendor's machines below which it has no weights of its own: each is held out in turn, and the
weights that predict it must rest on two others at least."""


@dataclass(frozen=True, slots=True)
class VendorWeights:
    """What a vendor's own machines teach beyond the shared calibration (``vendor_weights``)."""

    kept: dict[str, dict[str, list[float]]]
    """Group ('<vendor>', '<vendor>/tile': ``generation.weights_groups``) -> '<kind>/<task>/<precision>' ->
    weights fitted on every machine of the group."""
    held_out: dict[str, generation.LlmCalibration]
    """Per machine of such a vendor, the calibration that predicts it: the kept keys fitted without it."""
    compared: list[tuple[str, str, int, float, float]]
    """(group, key, steps, the mean abs log error before the group's weights (the shared weights; for a
    tile group, the vendor's), the group's own, each machine held out)."""


def vendor_weights(shared: generation.LlmCalibration, base_vendor: str, by_vm: dict[str, list[Case]]) -> VendorWeights:
    """Weights of their own for the vendors other than the calibration machine's (``base_vendor``) with
    ``MIN_MACHINES`` machines or more in ``by_vm`` (``other_cases``), and then for those of a vendor's machines
    whose precision runs on tile units (AMX), where ``MIN_MACHINES`` of them measured it: their group
    '<vendor>/tile' stands for the vendor's parts that run it so (``generation.weights_groups``), against the
    vendor's own weights (an Emerald Rapids VM without AMX ran eager bf16 slower than its fp32; those with it,
    faster). Each group is fitted as ``group_weights`` says. Any vendor weights ``shared`` has are set aside
    first."""
    shared = shared.model_copy(update={"vendor_weights": {}})
    vendors: dict[str, list[str]] = defaultdict(list)
    for vm, found in by_vm.items():
        if found and found[0].vendor != base_vendor:
            vendors[found[0].vendor].append(vm)
    kept: dict[str, dict[str, list[float]]] = {}
    held_out: dict[str, generation.LlmCalibration] = {}
    compared: list[tuple[str, str, int, float, float]] = []
    for vendor, vms in sorted(vendors.items()):
        if len(vms) < MIN_MACHINES:
            continue
        groups = [(vendor, vms, lambda c: True)]
        tiled = [vm for vm in vms if any(c.tiles for c in by_vm[vm])]
        if len(tiled) >= MIN_MACHINES:
            groups.append((f"{vendor}/{generation.TILE_GROUP}", tiled, lambda c: c.tiles))
        held_out.update({vm: shared for vm in vms})
        for group, members, chosen in groups:
            found = group_weights(group, members, by_vm, chosen, shared, held_out)
            kept.update(found.kept)
            held_out.update(found.held_out)
            compared += found.compared
    return VendorWeights({g: w for g, w in kept.items() if w}, held_out, compared)


def group_weights(
    group: str,
    vms: list[str],
    by_vm: dict[str, list[Case]],
    chosen: Callable[[Case], bool],
    shared: generation.LlmCalibration,
    before: dict[str, generation.LlmCalibration],
) -> VendorWeights:
    """One group's weights, from ``vms``' ``chosen`` steps. Per task and precision, each machine is held out
    and predicted with weights fitted on the others' one-thread steps (as the shared calibration was
    measured), the host part held at the shared weight (``generation.HOST``: the lab's VMs of a vendor stream
    at one bandwidth, so they cannot tell host time from weight reads); a key is kept where those predictions
    beat the machine's calibration before the group's (``before``; mean absolute log error over every chosen
    step of the group's machines, both thread counts), and its kept weights are then fitted on every machine
    of the group. ``held_out``: each machine's calibration before, with the kept keys fitted without it."""
    one_thread = {vm: [c for c in by_vm[vm] if chosen(c) and (c.result.threads or 1) == 1] for vm in vms}
    without = {vm: calibration([c for o in vms if o != vm for c in one_thread[o]], shared).weights for vm in vms}
    keys = []
    compared = []
    for key in sorted(set(shared.weights).intersection(*without.values())):
        steps = [(vm, c) for vm in vms for c in by_vm[vm] if c.key == key and chosen(c)]
        own = {vm: with_weights(before[vm], group, {key: without[vm][key]}) for vm in vms}
        then = statistics.fmean(abs(math.log(predicted(before[vm], c) / c.measured_s)) for vm, c in steps)
        now = statistics.fmean(abs(math.log(predicted(own[vm], c) / c.measured_s)) for vm, c in steps)
        compared.append((group, key, len(steps), then, now))
        if now < then:
            keys.append(key)
    every = calibration([c for vm in vms for c in one_thread[vm]], shared).weights
    held_out = {vm: with_weights(before[vm], group, {key: without[vm][key] for key in keys}) for vm in vms}
    return VendorWeights({group: {key: every[key] for key in keys}}, held_out, compared)


def with_weights(
    tuned: generation.LlmCalibration, group: str, weights: dict[str, list[float]]
) -> generation.LlmCalibration:
    """``tuned`` with ``weights`` added to its vendor weights' ``group``."""
    groups = {**tuned.vendor_weights, group: {**tuned.vendor_weights.get(group, {}), **weights}}
    return tuned.model_copy(update={"vendor_weights": groups})


def cpu_band(held_out: list[float], *elsewhere: list[float]) -> float:
    """A task's CPU band: 90% of its absolute log errors with each preset held out, and no narrower than
    90% of the other machines' (a catalog part's figure is never the calibration machine's own), each list
    of ``elsewhere`` on its own: the errors of a vendor's machines held out from its weights, and those of
    the weights as shipped, fitted on them too (tests/perfmodel/test_llm_other_machines.py)."""
    return max([quantile90(held_out)] + [quantile90(errors) for errors in elsewhere if errors])


def error(predicted: float, measured: float) -> float:
    return abs(predicted / measured - 1)


def quantile90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def header(markdown: bool, *columns: str) -> None:
    """A table's header line (and, for markdown, its rule), cells bounded as the rows' are."""
    bar = "|" if markdown else " "
    print(f"{bar} " + f" {bar} ".join(columns) + f" {bar}")
    if markdown:
        print("|---" * len(columns) + "|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--run", type=Path, nargs="+", default=RUNS, help="run reports (default: benchmarks/data/llm_cpu_run*.json)"
    )
    machine_options(parser)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--write", action="store_true", help=f"write the factors and bands to {OUT}")
    parser.add_argument("--out", type=Path, default=OUT, help="where --write writes (default: the shipped file)")
    args = parser.parse_args()
    reports = [RunReport.model_validate_json(path.read_text(encoding="utf-8")) for path in args.run]
    if len({r.machine.hostname for r in reports}) > 1:
        raise SystemExit("the runs are of different machines: hold out presets of one machine at a time")
    report = reports[0]
    results, spread = fastest(reports)
    clock, part = described(report, results, args)
    found = cases(results, part)
    per_preset = held_out(found)
    spreads = sorted(spread.values())
    print(
        f"{part.name}: fp32 {part.peak_fp32_tflops:.3f} TFLOP/s, bf16 {part.peak_bf16_tflops:.3f} by rule at "
        f"{clock:g} GHz; bandwidth {part.memory_bandwidth_gb_s:.1f} GB/s measured; {len(found)} configs, the "
        f"fastest of {len(reports)} rounds each (slowest / fastest round: median {statistics.median(spreads):.2f}, "
        f"max {spreads[-1]:.2f})"
    )
    bar = "|" if args.markdown else " "
    header(
        args.markdown,
        "preset",
        "task",
        "prec",
        "batch",
        "context",
        "measured ms",
        "held-out ms",
        "error",
        "one factor",
        "model alone",
        "roofline",
    )
    errors: dict[str, dict[Task, list[float]]] = {
        name: defaultdict(list) for name in ("held-out", "factor", "model", "roofline")
    }
    logs: dict[Task, list[float]] = defaultdict(list)
    for preset, rows in per_preset.items():
        for c, held, one in rows:
            r = c.result
            errors["held-out"][c.task].append(error(held, c.measured_s))
            errors["factor"][c.task].append(error(one, c.measured_s))
            errors["model"][c.task].append(error(c.modelled_s, c.measured_s))
            errors["roofline"][c.task].append(error(c.roofline_s, c.measured_s))
            logs[c.task].append(abs(math.log(held / c.measured_s)))
            print(
                f"{bar} {preset} {bar} {c.task.value} {bar} {r.precision.value} {bar} {r.batch_size} {bar} "
                f"{r.context_tokens} {bar} {c.measured_s * 1000:,.1f} {bar} {held * 1000:,.1f} {bar} "
                f"{error(held, c.measured_s):.1%} {bar} {error(one, c.measured_s):.1%} {bar} "
                f"{error(c.modelled_s, c.measured_s):.1%} {bar} {error(c.roofline_s, c.measured_s):.1%} {bar}"
            )
    print()
    header(args.markdown, "task", "cases", "held-out median", "held-out mean", "one factor", "model alone", "roofline")
    for task in TASKS:
        held = errors["held-out"][task]
        print(
            f"{bar} {task.value} {bar} {len(held)} {bar} {statistics.median(held):.1%} {bar} "
            f"{statistics.fmean(held):.1%} {bar} {statistics.fmean(errors['factor'][task]):.1%} {bar} "
            f"{statistics.fmean(errors['model'][task]):.1%} {bar} "
            f"{statistics.fmean(errors['roofline'][task]):.1%} {bar}"
        )
    runs = language_runs()
    gpu = reference_cases(runs)
    gpu_factors, gpu_bands, gpu_held = gpu_calibration(gpu)
    print()
    columns = ("GPU reference run", "task", "batch", "context", "measured ms", "model ms", "measured / model")
    header(args.markdown, *columns)
    for c in gpu:
        r = c.result
        print(
            f"{bar} {r.workload} {r.precision.value} {bar} {c.task.value} {bar} {r.batch_size} {bar} "
            f"{r.context_tokens} {bar} {c.measured_s * 1000:,.2f} {bar} {c.modelled_s * 1000:,.2f} {bar} "
            f"{c.measured_s / c.modelled_s:.2f} {bar}"
        )
    for task, errors in gpu_held.items():
        said = ", ".join(f"{e:.2f}" for e in errors) or "none (one result)"
        key = f"gpu/{task}"
        print(f"{key}: factor {gpu_factors[key]}, held-out log errors {said}, band {gpu_bands[key]}")
    everything = calibration(found)
    by_vm = other_cases(args.run)
    own = vendor_weights(everything, found[0].vendor, by_vm)
    everything = everything.model_copy(update={"vendor_weights": own.kept})
    elsewhere = other_machine_errors(everything, by_vm, own.held_out)
    as_shipped = other_machine_errors(everything, by_vm)
    print()
    header(
        args.markdown,
        "vendor (/tile: its machines with AMX)",
        "task and precision",
        "steps",
        "before (the shared weights; for /tile, the vendor's)",
        "its own, machine held out",
        "kept",
    )
    for group, key, n, before, after in own.compared:
        print(
            f"{bar} {group} {bar} {key} {bar} {n} {bar} {before:.3f} {bar} {after:.3f} {bar} "
            f"{'yes' if after < before else 'no'} {bar}"
        )
    print()
    for task in TASKS:
        if elsewhere[task]:
            carried = elsewhere[task]
            print(
                f"cpu/{task.value} on other machines ({OTHER_MACHINES.relative_to(ROOT)}), the calibration fitted on "
                f"every preset: {len(carried)} steps, mean abs log error {statistics.fmean(carried):.2f}, 90% within "
                f"{quantile90(carried):.2f} (each preset held out here: {quantile90(logs[task]):.2f})"
            )
    if args.write:
        # rounded up: a band the file keeps at four decimals must still hold the error that set it
        cpu_bands = {
            f"cpu/{t.value}": math.ceil(cpu_band(logs[t], elsewhere[t], as_shipped[t]) * 1e4) / 1e4 for t in TASKS
        }
        calibration_out = generation.LlmCalibration(
            factors=everything.factors | gpu_factors,
            weights=everything.weights,
            vendor_weights=everything.vendor_weights,
            bands=cpu_bands | gpu_bands,
            observations={f"cpu/{t.value}": sum(1 for c in found if c.task is t) for t in TASKS}
            | {key: sum(1 for c in gpu if f"gpu/{c.task.value}" == key) for key in gpu_factors},
            measured_on=[
                f"{report.machine.hostname}: {part.name}, {len(found)} prefill/decode configs of "
                f"{', '.join(sorted(per_preset))}, fastest of {len(reports)} rounds (benchmarks/llm_cpu.toml, "
                f"{report.finished_at:%Y-%m-%d})"
            ]
            + [
                f"{run.source}: {len(settled)} settled prefill/decode results of "
                f"{', '.join(sorted({r.workload for r in settled}))} ({run.captured}; the gpu factors)"
                for run, settled in runs
            ],
            vendors={"gpu": sorted({get(run.hardware_id).vendor for run, _ in runs})} if gpu else {},
            runtimes={"gpu": sorted({c.result.runtime for c in gpu})} if gpu else {},
        )
        args.out.write_text(json.dumps(calibration_out.model_dump(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
