"""Lambda's multi-GPU training rows (2x/4x/8x) with the 1-GPU row each is compared to.

The package ships Lambda's 1-GPU rows only (scripts/build_catalog.py), so the multi-GPU ones are read
here from the datasets folder (lambda-dl-benchmark/, see its SOURCES.md). A throughput cell is for
the whole config (all its GPUs); a batch cell is the global batch, N x the per-GPU batch (1x H100
SXM5 runs 640 images per step, 2x 1280). A config's 1-GPU reference is the 1-GPU row of the same
host when the dataset has one (``Dell 2x H100 80GB SXM5`` -> ``Dell H100 80GB SXM5``; v2_2025's
``..._4x_Texas_2xH100..._<ip>`` -> ``..._4x_Texas_1xH100..._<ip>``), else the median of the part's
1-GPU rows in the same dataset version, else none (the model's 1-GPU prediction stands in).

v2_2025 is a forward test set: read for evaluation only, never fitted on.
"""

from __future__ import annotations

import csv
import re
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from app.catalog import CatalogHardware
from app.contracts import Precision, Task
from app.perfmodel.observations import per_sample
from app.perfmodel.profile import Profile
from app.perfmodel.profile import shipped as profiles

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = {"resnet50": "images/s", "bert_base_squad": "sequences/s", "bert_large_squad": "sequences/s"}
WORKLOADS["gnmt"] = "tokens/s"
"""Lambda's workloads with a zoo counterpart and the unit Lambda counts them in."""
DEVICES = (2, 4, 8)
"""Configs kept: one machine each (3x RTX 3090 is left out with 16x RTX A4000, which spans machines)."""

CLOUD_INSTANCES = {
    "p3.8xlarge": (4, "v100-sxm2-16gb"),
    "p3.16xlarge": (8, "v100-sxm2-16gb"),
    "p4d.24xlarge": (8, "a100-sxm4-40gb"),
}
"""AWS instance names in v0_2022 -> (GPUs, part): AWS's instance type pages (p3: V100 16GB SXM2 with
NVLink; p4d: 8 A100 40GB SXM4 with NVSwitch)."""
CLOUD_NAMES = {
    "Lambda Cloud — V100 16GB": "v100-sxm2-16gb",
    "Lambda Cloud — GTX 1080Ti": "gtx-1080-ti",
    "Lambda Cloud — RTX 6000": "quadro-rtx-6000",
    "Linode Cloud — RTX 6000": "quadro-rtx-6000",
}
"""v0_2022 cloud rows whose 1-GPU name app/catalog/curated/lambda_names.csv lacks (no 1-GPU row has
it); Lambda's and Linode's 2022 RTX 6000 instances are the Turing Quadro board."""
SOURCE = {"v0_2022": "public:lambda-2022", "v1_2024": "public:lambda-2024", "v2_2025": "public:lambda-2025"}


@dataclass(frozen=True, slots=True)
class MultiRow:
    """One workload and precision column of one multi-GPU config."""

    version: str
    config: str
    """The dataset's name of the config (v2_2025: the part and GPU count; its hosts are merged)."""
    part: str
    devices: int
    bridged: bool
    """The name says NVLink: the boards are bridged in pairs."""
    workload: str
    column: str
    """Lambda's column: fp32 (TF32 where the part has it) or fp16 (mixed precision)."""
    precision: Precision
    profile: Profile
    batch: int
    """Per device."""
    throughput: float
    """Samples/s of all devices together (GNMT's tokens turned into sentence pairs)."""
    single: float | None
    """Samples/s of one device of the part, same dataset version and column; None where none was run."""

    @property
    def source(self) -> str:
        return SOURCE[self.version]

    @property
    def key(self) -> str:
        return f"{self.workload} {self.column}"

    @property
    def label(self) -> str:
        return f"{self.version} {self.config} {self.key}"


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _names() -> dict[tuple[str, str], str]:
    rows = _read(ROOT / "app" / "catalog" / "curated" / "lambda_names.csv")
    return {(r["dataset"], r["name"]): r["hardware_id"] for r in rows}


def _precision(column: str, part: CatalogHardware) -> Precision:
    """NGC runs Lambda's fp32 column as TF32 where the part has TF32 (as scripts/build_catalog.py)."""
    if column == "fp16":
        return Precision.fp16
    return Precision.tf32 if part.peak_tf32_tflops is not None else Precision.fp32


def _split(version: str, name: str, names: Mapping[tuple[str, str], str]) -> tuple[int, str, str | None]:
    """(GPUs, the 1-GPU name of the same host, part) of a v0/v1 config name."""
    if name in CLOUD_INSTANCES:
        devices, part = CLOUD_INSTANCES[name]
        return devices, name, part
    found = re.search(r"(\d+)\s*x\s*", name)
    if found is None:
        return 1, name, names.get((version, name)) or CLOUD_NAMES.get(name)
    base = (name[: found.start()] + name[found.end() :]).replace(" NVLink", "").strip()
    return int(found.group(1)), base, names.get((version, base)) or CLOUD_NAMES.get(base)


def _value(cell: str | None) -> float | None:
    try:
        value = float(cell or "")
    except ValueError:
        return None
    return value if value > 0 else None


def published(datasets: Path, catalog: Mapping[str, CatalogHardware], version: str) -> list[MultiRow]:
    """The 2x/4x/8x rows of Lambda's ``version`` (v0_2022 or v1_2024) with a catalog part and a profile."""
    folder = datasets / "lambda-dl-benchmark" / version
    names = _names()
    rows: list[MultiRow] = []
    for column in ("fp32", "fp16"):
        throughput = _read(folder / f"pytorch-train-throughput-{column}.csv")
        batches = {r["name_gpu"]: r for r in _read(folder / f"pytorch-train-bs-{column}.csv")}
        singles: dict[str, dict[str, float]] = {}  # 1-GPU name -> workload -> samples/s
        by_part: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in throughput:
            devices, base, part = _split(version, r["name_gpu"], names)
            if devices == 1 and part is not None:
                singles[base] = {w: v for w in WORKLOADS if (v := _value(r.get(w))) is not None}
                for w, v in singles[base].items():
                    by_part[(part, w)].append(v)
        for r in throughput:
            name = r["name_gpu"]
            devices, base, part = _split(version, name, names)
            if devices not in DEVICES or part is None or part not in catalog:
                continue
            for workload, unit in WORKLOADS.items():
                value, size = _value(r.get(workload)), _value(batches.get(name, {}).get(workload))
                precision = _precision(column, catalog[part])
                profile = profiles().get((workload, Task.train, precision))
                if value is None or size is None or profile is None:
                    continue
                single = singles.get(base, {}).get(workload)
                if single is None and by_part.get((part, workload)):
                    single = statistics.median(by_part[(part, workload)])
                count = per_sample(unit, profile)
                rows.append(
                    MultiRow(
                        version=version,
                        config=name,
                        part=part,
                        devices=devices,
                        bridged="NVLink" in name,
                        workload=workload,
                        column=column,
                        precision=precision,
                        profile=profile,
                        batch=max(1, round(size / devices)),
                        throughput=value / count,
                        single=None if single is None else single / count,
                    )
                )
    return rows


def forward(datasets: Path, catalog: Mapping[str, CatalogHardware]) -> list[MultiRow]:
    """v2_2025's 2x/4x/8x rows, one per part, GPU count, workload and column (the median over its
    hosts). v2_2025 publishes no batch sizes: each GPU runs the v1_2024 H100 SXM5 per-GPU batch (the
    same scripts; v1_2024's multi-GPU rows keep the 1-GPU batch per GPU)."""
    parts = {name: part for (dataset, name), part in _names().items() if dataset == "v2_2025"}
    pattern = re.compile(r"_(\d+)x(" + "|".join(sorted(map(re.escape, parts), key=len, reverse=True)) + r")(?=_|$)")
    sizes = {
        (w, column): int(v)
        for column in ("fp32", "fp16")
        for r in _read(datasets / "lambda-dl-benchmark" / "v1_2024" / f"pytorch-train-bs-{column}.csv")
        if r["name_gpu"] == "H100 80GB SXM5"
        for w in WORKLOADS
        if (v := _value(r.get(w))) is not None
    }
    merged: dict[tuple[str, int, str, str], list[MultiRow]] = defaultdict(list)
    for column in ("fp32", "fp16"):
        table = _read(datasets / "lambda-dl-benchmark" / "v2_2025" / f"pytorch-train-throughput-v2-{column}.csv")
        hosts: dict[tuple[str, str], float] = {}  # (host, workload) -> 1-GPU value
        by_part: dict[tuple[str, str], list[float]] = defaultdict(list)
        parsed = []
        for r in table:
            found = pattern.search(r[""])
            if found is None:
                continue
            devices, part = int(found.group(1)), parts[found.group(2)]
            host = r[""][: found.start()] + r[""][found.end() :]
            parsed.append((r, devices, part, host))
            if devices == 1:
                for w in WORKLOADS:
                    if (v := _value(r.get(w))) is not None:
                        hosts[(host, w)] = v
                        by_part[(part, w)].append(v)
        for r, devices, part, host in parsed:
            if devices not in DEVICES or part not in catalog:
                continue
            precision = _precision(column, catalog[part])
            for workload, unit in WORKLOADS.items():
                value, size = _value(r.get(workload)), sizes.get((workload, column))
                profile = profiles().get((workload, Task.train, precision))
                if value is None or size is None or profile is None:
                    continue
                single = hosts.get((host, workload))
                if single is None and by_part.get((part, workload)):
                    single = statistics.median(by_part[(part, workload)])
                count = per_sample(unit, profile)
                merged[(part, devices, workload, column)].append(
                    MultiRow(
                        version="v2_2025",
                        config=f"{devices}x {part}",
                        part=part,
                        devices=devices,
                        bridged=False,
                        workload=workload,
                        column=column,
                        precision=precision,
                        profile=profile,
                        batch=size,
                        throughput=value / count,
                        single=None if single is None else single / count,
                    )
                )
    out = []
    for group in merged.values():
        singles = [g.single for g in group if g.single is not None]
        out.append(
            replace(
                group[0],
                throughput=statistics.median(g.throughput for g in group),
                single=statistics.median(singles) if singles else None,
            )
        )
    return sorted(out, key=lambda r: r.label)
