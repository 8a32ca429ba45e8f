"""Build app/catalog/data/hardware.json from the public datasets in ../shared/datasets.

Run from the repository root:  python scripts/build_catalog.py [--datasets ../shared/datasets] [--out DIR]

It also writes app/catalog/data/public_results.csv: measured results others published (Lambda's
2024 PyTorch training throughput, 1-GPU rows; OpenVINO's CPU inference throughput), kept apart from
the lab's own results under source=public:... .

Every figure in the output names the dataset row it came from. The curated tables in
app/catalog/curated/ only say which rows describe which part, which names a driver reports for
it, and (where no dataset has a figure) the vendor datasheet value with its citation. This
script holds no figures: only how to read the datasets. Nothing is guessed: a figure no source
gives stays null.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog_cpus import CpuBuilder
from catalog_gpus import GpuBuilder, check_ids
from catalog_io import csv_rows

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "app" / "catalog" / "data"
CURATED = ROOT / "app" / "catalog" / "curated"

PUBLIC_COLUMNS = [
    "source",
    "hardware_id",
    "hardware_name",
    "workload",
    "unit",
    "runtime",
    "precision",
    "batch_size",
    "devices",
    "throughput_samples_per_s",
    "latency_p99_ms",
    "mean_power_w",
    "note",
]


@dataclass(frozen=True)
class Curated:
    """The public-result tables of app/catalog/curated/ (the parts: scripts/catalog_gpus.py and
    scripts/catalog_cpus.py)."""

    workloads: dict[str, dict[str, tuple[str, str]]]  # dataset -> its column -> (workload, unit)
    citations: dict[str, str]  # dataset -> how a source names it


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def load_curated(folder: Path = CURATED) -> Curated:
    workloads: dict[str, dict[str, tuple[str, str]]] = {}
    for row in _csv(folder / "public_workloads.csv"):
        workloads.setdefault(row["dataset"], {})[row["column"]] = (row["workload"], row["unit"])
    citations = {row["dataset"]: row["citation"] for row in _csv(folder / "datasets.csv")}
    return Curated(workloads=workloads, citations=citations)


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    match = re.search(r"[-+]?\d+(\.\d+)?", value.replace(",", ""))
    return float(match.group()) if match else None


def _lambda_results(
    ds: Path,
    curated: Curated,
    lambda_map: dict[tuple[str, str], str],
    no_tf32: set[str],
    version: str,
    source: str,
) -> list[dict[str, Any]]:
    """Lambda's 1-GPU PyTorch training throughput of one dataset version (v2_2025 is held out)."""
    rows: list[dict[str, Any]] = []
    folder = ds / "lambda-dl-benchmark" / version
    for column_precision in ("fp32", "fp16"):
        throughput = _csv(folder / f"pytorch-train-throughput-{column_precision}.csv")
        batch = {r["name_gpu"]: r for r in _csv(folder / f"pytorch-train-bs-{column_precision}.csv")}
        for row in throughput:
            if float(row["num_gpu"]) != 1:
                continue
            name = row["name_gpu"]
            hardware_id = lambda_map.get((version, name))
            if hardware_id is None:
                raise SystemExit(f"lambda_names.csv: no catalog entry for {version} row {name!r}")
            # NGC containers run fp32 matmuls as TF32 on Ampere and newer
            precision = "tf32" if column_precision == "fp32" and hardware_id not in no_tf32 else column_precision
            for column, (workload, unit) in curated.workloads["lambda-dl-benchmark"].items():
                value = _num(row.get(column))
                size = _num(batch[name].get(column)) if name in batch else None
                if not value or not size:
                    continue
                rows.append(
                    {
                        "source": source,
                        "hardware_id": hardware_id,
                        "hardware_name": name,
                        "workload": workload,
                        "unit": unit,
                        "runtime": "pytorch-ngc",
                        "precision": precision,
                        "batch_size": int(size),
                        "devices": 1,
                        "throughput_samples_per_s": value,
                        "latency_p99_ms": "",
                        "mean_power_w": "",
                        "note": f"Lambda deeplearning-benchmark {version}, {column_precision} column, training",
                    }
                )
    return rows


def build_public_results(
    ds: Path, curated: Curated, entries: list[dict[str, Any]], lambda_map: dict[tuple[str, str], str]
) -> list[dict[str, Any]]:
    no_tf32 = {e["id"] for e in entries if e["kind"] == "gpu" and e.get("peak_tf32_tflops") is None}
    rows: list[dict[str, Any]] = []
    for version, source in (("v1_2024", "public:lambda-2024"), ("v0_2022", "public:lambda-2022")):
        rows += _lambda_results(ds, curated, lambda_map, no_tf32, version, source)
    cpu_patterns = [(e["id"], [re.compile(p) for p in e.get("patterns", [])]) for e in entries if e["kind"] == "cpu"]
    openvino_workloads = curated.workloads["openvino-benchmark"]
    for row in _csv(ds / "openvino-benchmark" / "OV-benchmark-data.EXCERPT.csv"):
        model = openvino_workloads.get(row.get("Network model", ""))
        platform = row.get("Platform name", "")
        if model is None or not platform.endswith("CPU-only"):
            continue
        plain = platform.replace("®", "(R)").replace(" CPU-only", " ")
        hardware_id = next((cid for cid, pats in cpu_patterns if any(p.search(plain) for p in pats)), None)
        if hardware_id is None:
            continue
        for precision, column, latency in (
            ("int8", "Throughput-INT8", "Latency_int8"),
            ("fp32", "Throughput-FP32", "Latency_FP32"),
        ):
            value = _num(row[column])
            if not value:
                continue
            rows.append(
                {
                    "source": "public:openvino-2024.1",
                    "hardware_id": hardware_id,
                    "hardware_name": platform,
                    "workload": model[0],
                    "unit": model[1],
                    "runtime": "openvino",
                    "precision": precision,
                    "batch_size": 1,
                    "devices": int(_num(row["Sockets"]) or 1),
                    "throughput_samples_per_s": value,
                    "latency_p99_ms": _num(row.get(latency, "")) or "",
                    "mean_power_w": "",
                    "note": "OpenVINO 2024.1 benchmark_app throughput mode, all sockets; latency is OpenVINO's figure",
                }
            )
    return rows


def _lambda_map(folder: Path) -> dict[tuple[str, str], str]:
    return {(r["dataset"], r["name"]): r["hardware_id"] for r in csv_rows(folder / "lambda_names.csv")}


LAMBDA_DATES = {"v0_2022": "2022-06-30", "v1_2024": "2024-07-24"}
"""The commit date of each Lambda dataset version (lambda-dl-benchmark/SOURCES.md): its price date."""


def add_prices(ds: Path, entries: list[dict[str, Any]], lambda_map: dict[tuple[str, str], str]) -> None:
    """price_usd, its date and source: Lambda's newest 1-GPU price, else the release price with its date."""
    by_id = {e["id"]: e for e in entries}
    for version in ("v1_2024", "v0_2022"):
        for row in _csv(ds / "lambda-dl-benchmark" / version / "pytorch-train-throughput-fp32.csv"):
            if float(row["num_gpu"]) != 1 or not _num(row["price"]):
                continue
            entry = by_id.get(lambda_map.get((version, row["name_gpu"]), ""))
            if entry is None or entry.get("price_usd") is not None:
                continue
            entry["price_usd"] = _num(row["price"])
            entry["price_date"] = LAMBDA_DATES[version]
            entry["sources"]["price_usd"] = (
                f"copied: lambda-dl-benchmark {version} pytorch-train-throughput-fp32.csv price,"
                f" row {row['name_gpu']!r}"
            )
    for entry in entries:
        if entry.get("price_usd") is None and entry.get("release_price_usd") is not None:
            entry["price_usd"] = entry["release_price_usd"]
            entry["price_date"] = entry.get("release_date")
            entry["sources"]["price_usd"] = entry["sources"]["release_price_usd"] + " (release price, at release date)"


def _ordered(entry: dict[str, Any]) -> dict[str, Any]:
    sources = entry.pop("sources")
    entry["sources"] = dict(sorted(sources.items()))
    return entry


def build(ds: Path, out: Path, curated_folder: Path = CURATED) -> tuple[Path, Path]:
    """Write hardware.json and public_results.csv into ``out`` from the datasets in ``ds``."""
    curated = load_curated(curated_folder)
    openvino = {
        row["Platform name"]: row
        for row in _csv(ds / "openvino-benchmark" / "OV-benchmark-data.EXCERPT.csv")
        if row.get("Network model") == "resnet-50"
    }
    gpus = GpuBuilder(ds, curated_folder, curated.citations)
    entries = [gpus.build(part, row) for part, row in gpus.parts()]
    entries += CpuBuilder(ds, curated_folder, curated.citations).entries(openvino)
    check_ids(entries)
    lambda_map = _lambda_map(curated_folder)
    add_prices(ds, entries, lambda_map)
    entries = [_ordered(e) for e in entries]
    out.mkdir(parents=True, exist_ok=True)
    hardware = out / "hardware.json"
    hardware.write_text(json.dumps({"generated_by": "scripts/build_catalog.py", "entries": entries}, indent=1) + "\n")
    public = build_public_results(ds, curated, entries, lambda_map)
    public_path = out / "public_results.csv"
    with public_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=PUBLIC_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(public)
    print(f"wrote {len(entries)} entries to {hardware} and {len(public)} public results to {public_path}")
    return hardware, public_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)
    parser.add_argument("--datasets", type=Path, default=default, required=default is None)
    parser.add_argument("--out", type=Path, default=DATA, help="folder to write into (default: app/catalog/data)")
    args = parser.parse_args()
    build(args.datasets, args.out)


if __name__ == "__main__":
    main()
