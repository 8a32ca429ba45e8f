"""How well the performance model predicts hardware it was not calibrated on, against two baselines.

    .venv/bin/python -m benchmarks.accuracy [--markdown] [--datasets ../shared/datasets] [--with-mlperf]
                                            [--with-references WEIGHT]
                                            [--in-sample] [--forward-diagnosis] [--starts K] [--seed S]

1. Leave one GPU out over Lambda 2024's single-GPU training rows (every workload with a zoo
   counterpart, the fp32 column — TF32 on Ampere and newer, NGC's default — and fp16): the model is
   calibrated on every other GPU (Lambda 2022 and 2024), then predicts the held-out one. Several
   hosts with the same GPU count as one GPU at their median. Side by side, in the same run: the
   log-linear baseline (log throughput = a + b log tensor peak + c log bandwidth, fitted per workload
   and column on the other GPUs) and the previous whole-model transfer (app/recommender/scaling.py).
2. Forward in time: calibrated on Lambda 2022 and 2024 only, the model predicts Lambda's 2025 rerun
   (v2_2025, read from the datasets folder, never shipped nor fitted) for the H200, B200 and GH200.
3. CPUs: leave one CPU out over OpenVINO's published CPU rows, the lab CPUs' figures (test 6) in the
   calibration; side by side, the model calibrated on OpenVINO's rows alone.
4. A graph runtime on GPUs (never fitted): MLPerf Inference's TensorRT int8 runs (below) against the
   model's figure for a graph runtime with no stack factor: how far the model's GPU graph runtimes are
   from the best published inference stack.
5. Eager PyTorch against ONNX Runtime on the lab's CPUs: each machine's measured eager / graph ratios
   predicted with the eager kernel factors (convolutions, GEMMs) from the other machines
   (app/perfmodel/runtime_pairs.py), and without any.
6. The lab's CPUs' absolute figures (eager PyTorch and ONNX Runtime, the same machines): each machine's
   predicted by the model calibrated on OpenVINO's rows and the other machines' figures
   (app/perfmodel/lab_levels.py), the median over its generation's catalog parts; side by side, the
   model calibrated on OpenVINO's rows alone, which is what set the CPU level before.
``--with-mlperf`` adds MLPerf Inference's Offline ResNet-50 and BERT-99 runs (TensorRT int8, MaxP,
uncapped, one node; app/perfmodel/mlperf_power.py reads them from the datasets folder) to the GPU
calibration of test 1 as a third published source: what docs/ACCURACY.md reports as tried and dropped.
``--with-references WEIGHT`` adds hwadvisor's own GPU reference runs (eager PyTorch on an H100 and an H200,
every settled result, no stack factor) to the GPU calibration of tests 1 and 2, each result weighing
WEIGHT: what docs/ACCURACY.md reports as tried in session 34 and not adopted.
``--in-sample`` also prints each GPU's mean signed error with every GPU in the calibration: what the
model's form cannot fit even when it sees the part (a diagnostic, not an accuracy figure).
``--forward-diagnosis`` takes test 2 apart against v2_2025's own H100 SXM5 rows (read for this, never
fitted): whether the rerun's stack moved, each part's measured and modelled speed-up over the H100, and
the least error a model monotone in the catalog's specs and right on the H100 could have.
``--starts K`` and ``--seed S`` fit the GPU model from K starting points drawn with seed S instead of the
shipped calibration's (app/perfmodel/calibrate.py ``STARTS``, ``START_SEED``): how much of each figure is
which of the fit's many near-equal optima it lands in.
Bands: each prediction's band is the 90% quantile of the absolute log errors of the *other* held-out
parts (split conformal, app/perfmodel/bands.py); coverage is how often the truth falls inside.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from app.catalog import CatalogHardware, load, reference
from app.catalog.published import shipped
from app.contracts import Precision, PublicResult, Task
from app.perfmodel import bands, calibrate, lab_levels, mlperf_power, references, runtime_pairs
from app.perfmodel.calibrate import Fit, Observation, fit, leave_one_part_out, predict
from app.perfmodel.device import device
from app.perfmodel.model import Params, steps
from app.perfmodel.observations import case_of, from_public, group_of, median_per_part, per_sample
from app.perfmodel.params import shipped as calibration
from app.perfmodel.profile import Profile
from app.perfmodel.profile import shipped as profiles
from app.recommender.scaling import Reference, transfer

ROOT = Path(__file__).resolve().parents[1]
LAMBDA_2024 = "public:lambda-2024"
GPU_SOURCES = ("public:lambda-2022", "public:lambda-2024")
CPU_SOURCES = ("public:openvino-2024.1",)
# Lambda's 2025 machine ids (v2_2025) -> the catalog part (1-GPU systems only).
FORWARD_PARTS = {
    r"_1xH200_140GB_SXM": "h200-sxm-141gb",
    r"_1xB200_192GB": "b200-sxm-180gb",
    r"_1xGH200_96GB": "gh200-96gb",
    r"_1xGH200_80GB": "gh200-96gb",
}


FORWARD_WORKLOADS = ("resnet50", "bert_base_squad", "bert_large_squad", "gnmt")
V2_H100 = {r"_1xH100_80GB_SXM5": "h100-sxm5-80gb"}
"""v2_2025's own H100 SXM5 rows: read by ``--forward-diagnosis`` alone, to tell the rerun's stack from
the model's error (never fitted; the forward test's parts are measured against them, not calibrated)."""


UNITS = {"gnmt": "tokens/s"}
"""How Lambda counts each workload (lambda-dl-benchmark/SOURCES.md); the rest are samples/s."""


MLPERF = "public:mlperf-inference"
MLPERF_WORKLOADS = {"resnet50": "resnet50", "bert-99": "bert_large_squad"}
"""MLPerf's models -> the zoo's: BERT-99 is BERT-large on SQuAD at sequence 384."""
MLPERF_BATCH = 256
"""TensorRT's Offline scenario runs large batches; the submissions do not all say which."""


def mlperf_observations(datasets: Path, catalog: dict[str, CatalogHardware]) -> list[Observation]:
    """MLPerf Inference Offline runs of uncapped MaxP systems, one node, per accelerator, as observations
    of a published stack of their own; the forward test's GPUs are left out (they are its test)."""
    found = []
    for pair in mlperf_power.load(datasets).pairs:
        if pair.maxq or pair.stated_cap_w or pair.stated_tdp_w or pair.scenario != "Offline":
            continue
        if pair.catalog_id in FORWARD_PARTS.values() or pair.catalog_id not in catalog:
            continue
        workload = MLPERF_WORKLOADS[pair.workload]
        profile = _profile(workload, Task.infer, Precision.int8)
        dev = device(catalog[pair.catalog_id], Precision.int8)
        if profile is None or dev is None:
            continue
        found.append(
            Observation(
                profile=profile,
                batch=MLPERF_BATCH,
                device=dev,
                throughput=pair.per_accelerator_samples_per_s,
                runtime="tensorrt",
                group=group_of(MLPERF, workload, Task.infer, Precision.int8),
                label=f"{pair.catalog_id} {workload}/infer int8 (MLPerf {pair.version} {pair.system})",
            )
        )
    return median_per_part(found)


@dataclass(frozen=True, slots=True)
class Outcome:
    label: str
    part: str
    key: str  # workload/column
    measured: float
    predicted: float
    band: float | None = None  # absolute log error the band allows

    @property
    def error(self) -> float:
        return (self.predicted - self.measured) / self.measured * 100

    @property
    def covered(self) -> bool | None:
        if self.band is None:
            return None
        return abs(math.log(self.predicted / self.measured)) <= self.band


def _profile(workload: str, task: Task, precision: Precision) -> Profile | None:
    return profiles().get((workload, task, precision))


def _catalog() -> dict[str, CatalogHardware]:
    return {e.id: e for e in load()}


def _column(o: Observation) -> str:
    """The workload and precision as the sources publish them: Lambda's fp32 column ran TF32 where
    the GPU has it, so tf32 is reported as fp32."""
    precision = o.profile.precision
    return f"{o.profile.workload} {'fp32' if precision is Precision.tf32 else precision.value}"


def _public(sources: Sequence[str], *, one_device: bool = True) -> list[PublicResult]:
    """The published rows of ``sources``: 1-GPU systems only for GPUs; a CPU system's sockets are
    shared out (OpenVINO runs all sockets of a 2-socket server; the model predicts one socket)."""
    return [r for r in shipped() if r.source in sources and (r.devices == 1 or not one_device)]


def leave_one_out(
    observations: Sequence[Observation], kind: str, held_source: str | None = None, like: Params | None = None
) -> list[tuple[Observation, float]]:
    """Each part of ``held_source`` predicted by the model calibrated on every other part."""
    held = leave_one_part_out(observations, kind, only=held_source, like=like)
    return [(h.observation, h.predicted) for h in held]


def reference_observations(catalog: dict[str, CatalogHardware], weight: float) -> list[Observation]:
    """hwadvisor's GPU reference runs' settled eager results as observations of the lab's own stack (no stack
    factor), each weighing ``weight``: what ``--with-references`` tries (docs/ACCURACY.md)."""
    return [
        Observation(
            profile=p.case.profile,
            batch=p.case.batch,
            device=p.case.device,
            throughput=p.throughput,
            runtime=p.case.runtime,
            group=None,
            label=f"{p.source} {p.config}",
            weight=weight,
        )
        for p in references.points(reference.shipped(), catalog)
    ]


def openvino_rows(catalog: dict[str, CatalogHardware]) -> list[Observation]:
    """OpenVINO's published CPU rows as the CPU fit reads them: each part's systems at one config once."""
    return median_per_part(from_public(_public(CPU_SOURCES, one_device=False), catalog, _profile))


def loglinear(observations: Sequence[Observation]) -> dict[str, float]:
    """The naive baseline's leave-one-out prediction per observation label (3 parameters per column)."""
    by: dict[str, list[Observation]] = defaultdict(list)
    for o in observations:
        by[_column(o)].append(o)
    out = {}
    for group in by.values():
        for held in group:
            rest = [o for o in group if o.device.id != held.device.id]
            if len(rest) < 3:
                continue
            a = np.array([[1.0, math.log(o.device.matrix), math.log(o.device.bandwidth)] for o in rest])
            b = np.log([o.throughput for o in rest])
            x, *_ = np.linalg.lstsq(a, b, rcond=None)
            out[held.label] = float(
                math.exp(x[0] + x[1] * math.log(held.device.matrix) + x[2] * math.log(held.device.bandwidth))
            )
    return out


def old_transfer(observations: Sequence[Observation], catalog: dict[str, CatalogHardware]) -> dict[str, float]:
    """The previous model's leave-one-out prediction per observation label."""
    by: dict[str, list[Observation]] = defaultdict(list)
    for o in observations:
        by[_column(o)].append(o)
    out = {}
    for group in by.values():
        for held in group:
            refs = [
                Reference(o.device.name, catalog[o.device.id], o.profile.precision, o.throughput)
                for o in group
                if o.device.id != held.device.id
            ]
            done = transfer(refs, catalog[held.device.id], held.profile.precision, with_band=False)
            if done is not None:
                out[held.label] = done.throughput
    return out


def with_bands(pairs: Sequence[tuple[Observation, float]]) -> list[Outcome]:
    """Each prediction with the band the other parts' errors give it (split conformal)."""
    errors = {o.label: abs(math.log(p / o.throughput)) for o, p in pairs}
    out = []
    for o, p in pairs:
        others = [e for label, e in errors.items() if not label.startswith(o.device.id + " ")]
        out.append(Outcome(o.label, o.device.id, _column(o), o.throughput, p, bands.quantile(others)))
    return out


def v2_observations(datasets: Path, catalog: dict[str, CatalogHardware], parts: dict[str, str]) -> list[Observation]:
    """Lambda v2_2025's 1-GPU rows of ``parts`` (machine-id pattern -> catalog part) as observations of
    Lambda 2024's stack, one per machine, at the H100 SXM5's 2024 batch sizes (v2 publishes none)."""
    sizes = _batch_sizes(datasets)
    found = []
    folder = datasets / "lambda-dl-benchmark" / "v2_2025"
    for column in ("fp16", "fp32"):
        for row in _read(folder / f"pytorch-train-throughput-v2-{column}.csv"):
            name = row[""]
            part = next((p for pattern, p in parts.items() if re.search(pattern, name)), None)
            if part is None or part not in catalog or "_1x" not in name:
                continue
            precision = Precision.fp16 if column == "fp16" else Precision.tf32
            for workload in FORWARD_WORKLOADS:
                value = float(row.get(workload) or 0)
                profile = _profile(workload, Task.train, precision)
                dev = device(catalog[part], precision)
                size = sizes.get((workload, column))
                if not value or profile is None or dev is None or size is None:
                    continue
                found.append(
                    Observation(
                        profile=profile,
                        batch=size,
                        device=dev,
                        throughput=value / per_sample(UNITS.get(workload, "samples/s"), profile),
                        runtime="pytorch-ngc",
                        group=group_of(LAMBDA_2024, workload, Task.train, precision),
                        label=f"{part} {workload}/train {precision.value} (lambda v2 {name})",
                    )
                )
    return found


def forward(datasets: Path, catalog: dict[str, CatalogHardware], fitted: Fit, fitted_band: float) -> list[Outcome]:
    """Lambda v2_2025's H200/B200/GH200 rows predicted by ``fitted``, the model calibrated on Lambda 2022
    and 2024 (every row, not each part's median) and never on them."""
    found = v2_observations(datasets, catalog, FORWARD_PARTS)
    outcomes = list(zip(found, predict(fitted, found).tolist(), strict=True))
    merged: dict[tuple[str, str], list[tuple[Observation, float]]] = defaultdict(list)
    for o, p in outcomes:
        merged[(o.device.id, _column(o))].append((o, p))
    result = []
    for (part, column), group in sorted(merged.items()):
        measured = statistics.median(o.throughput for o, _ in group)
        result.append(Outcome(f"{part} {column}", part, column, measured, group[0][1], fitted_band))
    return result


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _batch_sizes(datasets: Path) -> dict[tuple[str, str], int]:
    """v2_2025 publishes no batch sizes: the H100 SXM5's from v1_2024 (the same scripts), per column."""
    sizes = {}
    for column in ("fp16", "fp32"):
        for row in _read(datasets / "lambda-dl-benchmark" / "v1_2024" / f"pytorch-train-bs-{column}.csv"):
            if row["name_gpu"] == "H100 80GB SXM5":
                for workload, value in row.items():
                    if workload not in ("name_gpu", "num_gpu", "watt", "price") and value:
                        sizes[(workload, column)] = int(float(value))
    return sizes


def summary(name: str, outcomes: Sequence[Outcome]) -> str:
    if not outcomes:
        return f"{name}: nothing to compare"
    errors = [abs(o.error) for o in outcomes]
    signed = [o.error for o in outcomes]
    covered = [o.covered for o in outcomes if o.covered is not None]
    coverage = f", band coverage {sum(covered) / len(covered):.0%}" if covered else ""
    return (
        f"{name}: {len(outcomes)} predictions, mean abs error {statistics.fmean(errors):.1f}%, "
        f"median {statistics.median(errors):.1f}%, worst {max(errors):.1f}%, "
        f"mean signed {statistics.fmean(signed):+.1f}%{coverage}"
    )


def compare(name: str, outcomes: Sequence[Outcome], other: dict[str, float]) -> str:
    mine = [o for o in outcomes if o.label in other]
    errors = [abs(other[o.label] - o.measured) / o.measured * 100 for o in mine]
    if not errors:
        return f"{name}: nothing to compare"
    return f"{name}: {len(errors)} predictions, mean abs error {statistics.fmean(errors):.1f}%"


def table(outcomes: Sequence[Outcome]) -> str:
    columns = sorted({o.key for o in outcomes})
    parts = sorted({o.part for o in outcomes})
    cell = {(o.part, o.key): f"{o.error:+.1f}%{'' if o.covered in (None, True) else ' *'}" for o in outcomes}
    lines = ["| part | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for part in parts:
        lines.append(f"| {part} | " + " | ".join(cell.get((part, c), "") for c in columns) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="also print per-part tables")
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--with-mlperf", action="store_true", help="add MLPerf Inference runs to test 1's calibration")
    parser.add_argument(
        "--with-references",
        type=float,
        metavar="WEIGHT",
        help="add hwadvisor's GPU reference runs to tests 1 and 2's calibration, each result weighing WEIGHT",
    )
    parser.add_argument("--in-sample", action="store_true", help="also print each GPU's in-sample mean signed error")
    parser.add_argument(
        "--forward-diagnosis",
        action="store_true",
        help="also take the forward test apart against v2_2025's own H100 SXM5 rows (read, never fitted)",
    )
    parser.add_argument("--starts", type=int, help="the GPU fit's starting points (default: the shipped calibration's)")
    parser.add_argument("--seed", type=int, help="the seed of the GPU fit's starting points")
    args = parser.parse_args(argv)
    if args.starts is not None:
        calibrate.STARTS["gpu"] = args.starts
    if args.seed is not None:
        calibrate.START_SEED = args.seed
    catalog = _catalog()

    if args.with_mlperf and not args.datasets.is_dir():
        parser.error(f"--with-mlperf reads MLPerf from the datasets folder, and {args.datasets} is missing")
    mlperf = mlperf_observations(args.datasets, catalog) if args.datasets.is_dir() else []
    published = from_public(_public(GPU_SOURCES), catalog, _profile)
    lambda_gpu = median_per_part(published)
    gpu = lambda_gpu
    if args.with_mlperf:
        out(f"with MLPerf Inference: {len(mlperf)} observations on {len({o.device.id for o in mlperf})} parts")
        gpu = lambda_gpu + mlperf
    like = None
    if args.with_references is not None:
        refs = reference_observations(catalog, args.with_references)
        out(f"with hwadvisor's GPU reference runs: {len(refs)} results, each weighing {args.with_references:g}")
        gpu, published = [*gpu, *refs], [*published, *refs]
        like = replace(calibration().of("gpu"), values={})  # their eager host costs and stream rate, as measured
    pairs = leave_one_out(gpu, "gpu", held_source=LAMBDA_2024, like=like)
    logo = with_bands(pairs)
    held = [o for o, _ in pairs]
    out("# Leave one GPU out, Lambda 2024 (calibrated on the other GPUs of Lambda 2022 and 2024)")
    out(summary("performance model", logo))
    out(compare("log-linear baseline (peak, bandwidth)", logo, loglinear(held)))
    out(compare("previous whole-model transfer", logo, old_transfer(held, catalog)))
    if args.markdown:
        out(table(logo))

    if args.in_sample:
        in_sample(lambda_gpu, out)

    band = bands.quantile([abs(math.log(o.predicted / o.measured)) for o in logo])
    calibrated = fit(published, "gpu", like=like) if args.datasets.is_dir() else None
    ahead = forward(args.datasets, catalog, calibrated, band) if calibrated is not None else []
    out("")
    out("# Forward in time: Lambda v2_2025 predicted from Lambda 2022 and 2024")
    out(summary("performance model", ahead))
    if args.markdown:
        out(table(ahead))
    if args.forward_diagnosis and calibrated is not None and ahead:
        out("")
        out("# The forward test against v2_2025's own H100 SXM5 (read for this diagnosis, never fitted)")
        for line in forward_diagnosis(args.datasets, catalog, ahead, published, calibrated):
            out(line)

    if mlperf:
        bare = fit(lambda_gpu, "gpu")  # never MLPerf, even with --with-mlperf: this section is its test
        out("")
        out("# A graph runtime on GPUs: MLPerf Inference (TensorRT int8, Offline), the model with no stack factor")
        for o, p in zip(mlperf, predict(Fit(bare.params, {}, {}), mlperf), strict=True):
            out(f"{o.label}: measured {o.throughput:,.0f}/s, model {p:,.0f}/s, model / measured {p / o.throughput:.2f}")

    cpu = openvino_rows(catalog)
    parts = list(catalog.values())
    machines = runtime_pairs.shipped().machines
    levelled = lab_levels.calibrated(cpu, machines, parts)
    held_cpus = lab_levels.leave_one_part_out(cpu, machines, parts, levelled, only=CPU_SOURCES[0])
    cpu_logo = with_bands([(h.observation, h.predicted) for h in held_cpus])
    out("")
    out("# Leave one CPU out, OpenVINO 2024.1 (the lab CPUs' figures in the calibration)")
    out(summary("performance model", cpu_logo))
    out(compare("without the lab CPUs' figures", cpu_logo, {o.label: p for o, p in leave_one_out(cpu, "cpu")}))
    if args.markdown:
        out(table(cpu_logo))

    out("")
    out("# Eager PyTorch / ONNX Runtime on the lab's CPUs, each machine's eager kernel factors from the others")
    eager_ratios(fit(cpu, "cpu").params, parts, out)

    out("")
    out("# The lab's CPUs' own figures, each machine predicted from OpenVINO's rows and the other machines")
    lab_level(cpu, machines, parts, out)


def forward_diagnosis(
    datasets: Path,
    catalog: dict[str, CatalogHardware],
    ahead: Sequence[Outcome],
    gpu: Sequence[Observation],
    fitted: Fit,
) -> list[str]:
    """The forward test (``ahead``, by ``fitted`` calibrated on the published rows ``gpu``) taken apart
    against v2_2025's own H100 SXM5 (never fitted): whether the rerun's stack moved (its H100 over Lambda
    2024's), each part's measured and modelled speed-up over the H100, for a part that differs from the
    H100 in bandwidth alone the DRAM share of the H100's step its measured speed-up implies beside the
    model's, and the least mean error a model monotone in the catalog's specs and right on the H100 can
    have (every forward part has the H100's SMs, clock and peaks or more, and more bandwidth)."""
    h100 = median_per_part(v2_observations(datasets, catalog, V2_H100))
    before = {
        _column(o): o.throughput
        for o in median_per_part([o for o in gpu if o.device.id == "h100-sxm5-80gb" and LAMBDA_2024 in (o.group or "")])
    }
    modelled = {_column(o): (o.throughput, float(p)) for o, p in zip(h100, predict(fitted, h100), strict=True)}
    lines = [
        "v2_2025's H100 SXM5 over Lambda 2024's: "
        + ", ".join(f"{key} {modelled[key][0] / before[key]:.2f}" for key in sorted(modelled) if key in before)
    ]
    shares = dram_shares(h100, fitted)
    floors = []
    for o in ahead:
        if o.key not in modelled:
            continue
        measured_h100, predicted_h100 = modelled[o.key]
        floors.append(max(0.0, measured_h100 / o.measured - 1) * 100)
        line = (
            f"{o.part} {o.key}: measured {o.measured / measured_h100:.2f}x the H100, "
            f"model {o.predicted / predicted_h100:.2f}x"
        )
        faster = _bandwidth_alone(catalog, o.part, "h100-sxm5-80gb")
        implied = (1 - measured_h100 / o.measured) / (1 - 1 / faster) if faster is not None else None
        if implied is not None and 0 <= implied <= 1 and o.key in shares:  # below 0: slower than the H100
            line += f"; DRAM share of the H100's step its gain implies {implied:.2f}, the model's {shares[o.key]:.2f}"
        lines.append(line)
    if floors:
        lines.append(
            f"a model monotone in the specs and right on the H100 errs at least {statistics.fmean(floors):.1f}% "
            f"on average over these {len(floors)} cells"
        )
    return lines


def dram_shares(observations: Sequence[Observation], fitted: Fit) -> dict[str, float]:
    """Per column, the share of each observation's modelled step that is DRAM traffic (its stack's traffic
    factor in)."""
    cases = [case_of(o, fitted.traffic) for o in observations]
    return {_column(o): s.memory_s / s.seconds for o, s in zip(observations, steps(cases, fitted.params), strict=True)}


def _bandwidth_alone(catalog: dict[str, CatalogHardware], part: str, base: str) -> float | None:
    """``part``'s bandwidth over ``base``'s where that is all that differs between them (the H200 and the
    H100 SXM5: the same SMs, clock, peaks within a rounding and power), None otherwise. Where a step is compute and DRAM
    time added, a speed-up g over ``base`` then says the DRAM's share of ``base``'s step: (1 - 1/g) / (1 -
    1/that ratio)."""
    a, b = catalog[part], catalog[base]
    same = ("sm_count", "boost_mhz", "tdp_w", "peak_fp16_tflops", "peak_tf32_tflops")
    if not a.memory_bandwidth_gb_s or not b.memory_bandwidth_gb_s:
        return None
    if any(not math.isclose(getattr(a, f) or 0, getattr(b, f) or 0, rel_tol=1e-3) for f in same):
        return None
    return a.memory_bandwidth_gb_s / b.memory_bandwidth_gb_s


def in_sample(observations: Sequence[Observation], out: Callable[[str], None]) -> None:
    """Each GPU's mean signed error (and its range) with every GPU in the calibration, most negative first;
    then the mean absolute error over the cells leave one GPU out predicts (Lambda 2024's): the floor the
    model's form sets for that test before any part is held out."""
    fitted = fit(observations, "gpu")
    errors: dict[str, list[float]] = defaultdict(list)
    tested = []
    for o, p in zip(observations, predict(fitted, observations), strict=True):
        errors[o.device.id].append(p / o.throughput - 1)
        if LAMBDA_2024 in (o.group or ""):
            tested.append(abs(p / o.throughput - 1))
    out("")
    out("# In sample: every GPU calibrated on, each part's mean signed error (its rows' range)")
    for part, found in sorted(errors.items(), key=lambda kv: statistics.fmean(kv[1])):
        out(f"{part}: {statistics.fmean(found):+.1%} ({min(found):+.0%} to {max(found):+.0%}, {len(found)} rows)")
    out(
        f"mean abs error over the {len(tested)} Lambda 2024 cells leave one GPU out predicts, each part in the fit: "
        f"{statistics.fmean(tested):.1%} (what the model's form reaches before any part is held out)"
    )


def eager_ratios(params: Params, catalog: Sequence[CatalogHardware], out: Callable[[str], None]) -> None:
    """Test 5: leave one lab machine out over app/perfmodel/data/cpu_runtime_pairs.json."""
    machines = runtime_pairs.shipped().machines
    rows = runtime_pairs.leave_one_machine_out(machines, catalog, params)
    for machine, pair, held, bare in rows:
        config = f"{pair.workload}/{pair.task.value} {pair.precision.value} batch {pair.batch}"
        out(f"{machine} {config}: measured {pair.ratio:.2f}, model {held:.2f}, model without the factor {bare:.2f}")
    held = {(machine, pair) for machine, pair, _held, _bare in rows}
    found = runtime_pairs.factors(machines, catalog, params)
    of = {m.name: m.parts(catalog) for m in machines}
    for m in machines:
        alone = [p for p in m.pairs if runtime_pairs.on_tiles(p, of[m.name]) and (m.name, p) not in held]
        if alone:
            factors = ", ".join(f"{name} {found[name]:.3f}" for name in ("conv-tile", "gemm-tile") if name in found)
            out(
                f"{m.name}: {len(alone)} pairs on AMX's tiles, which no other machine ran: not held out "
                f"(in sample they set the eager tile factors, {factors})"
            )
    unexplained = set()
    for m in machines:
        for p in m.pairs:
            if (ends := runtime_pairs.unreached(p, of[m.name], params)) is not None:
                unexplained.add((m.name, p))
                out(
                    f"{m.name} {p.workload}/{p.task.value} {p.precision.value} batch {p.batch}: "
                    f"measured {p.ratio:.3f}, the model's {ends[0]:.2f}-{ends[1]:.2f} at any factor: "
                    "no factor explains it, and it sets none"
                )
    pooled = runtime_pairs.leave_one_machine_out(machines, catalog, params, pooled=True)
    for name, found, k in (
        ("with the factors from the other machines", rows, 2),
        ("with one factor for both classes from the other machines", pooled, 2),
        ("without any factor", rows, 3),
    ):
        errors = [abs(math.log(row[k] / row[1].ratio)) for row in found]
        units = []
        for unit, tiles in (("on the vector units", False), ("on AMX's tiles", True)):
            kept = [
                error
                for row, error in zip(found, errors, strict=True)
                if runtime_pairs.on_tiles(row[1], of[row[0]]) is tiles and (row[0], row[1]) not in unexplained
            ]
            if kept:
                units.append(f"{len(kept)} {unit} {statistics.fmean(kept):.2f}")
        out(
            f"{name}: {len(errors)} ratios, mean abs log error {statistics.fmean(errors):.2f} "
            f"(those a factor explains: {', '.join(units)})"
        )


def lab_level(
    cpu: Sequence[Observation],
    machines: Sequence[runtime_pairs.Machine],
    catalog: Sequence[CatalogHardware],
    out: Callable[[str], None],
) -> None:
    """Test 6: each lab machine's absolute eager and ONNX Runtime figures (the median over its generation's
    parts) by the model calibrated without it, beside the model calibrated on OpenVINO's rows alone (with
    the eager kernel factors from the other machines: the model before the lab's figures set its level)."""
    held = lab_levels.leave_one_machine_out(cpu, machines, catalog)
    before = []
    published_only = fit(cpu, "cpu")
    for m in machines:
        others = [other for other in machines if other.name != m.name]
        params = runtime_pairs.with_factors(
            published_only.params, runtime_pairs.factors(others, catalog, published_only.params)
        )
        before.extend(lab_levels.figures(replace(published_only, params=params), m, catalog))
    for now, then in zip(held, before, strict=True):
        out(
            f"{now.machine} {now.config}: measured {now.measured:,.1f}/s, model {now.predicted / now.measured:.2f}x, "
            f"before {then.predicted / then.measured:.2f}x"
        )
    for name, found in (("calibrated on the other machines", held), ("on OpenVINO's rows alone", before)):
        logs = [math.log(f.predicted / f.measured) for f in found]
        out(
            f"{name}: {len(logs)} figures, mean abs log error {statistics.fmean(abs(x) for x in logs):.2f}, "
            f"mean log error {statistics.fmean(logs):+.2f}"
        )
    # split conformal, as the other tests: each machine's band from the other machines' held-out errors
    inside = 0
    for f in held:
        others = [abs(math.log(g.predicted / g.measured)) for g in held if g.machine != f.machine]
        band = bands.quantile(others)
        inside += band is not None and abs(math.log(f.predicted / f.measured)) <= band
    out(f"band coverage (each machine's band from the others' errors): {inside / len(held):.0%}")


if __name__ == "__main__":
    main()
