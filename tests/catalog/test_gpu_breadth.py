"""The GPU catalog covers the parts the public datasets measured, and its derived peaks agree with
every published figure or are listed, with the reason, in curated/peak_exceptions.csv."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from app import catalog

ROOT = Path(__file__).resolve().parents[2]
CURATED = ROOT / "app" / "catalog" / "curated"
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)
needs_datasets = pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent")


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _missing_peaks(catalog_id: str) -> list[str]:
    """The peaks the entry's architecture rule has a rate for but the entry lacks."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from catalog_io import PEAK_FIELDS, toml

    entry = catalog.get(catalog_id)
    rules = {a["id"]: a for a in toml(CURATED / "architectures.toml")["arch"]}
    used = {m.group(1) for s in entry.sources.values() if (m := re.search(r"derived: ([a-z0-9-]+)[ ;(]", s))}
    assert len(used & set(rules)) == 1, f"{catalog_id}: derived by {used}"
    rates = rules[(used & set(rules)).pop()]["rates"]
    return [PEAK_FIELDS[p] for p in rates if getattr(entry, PEAK_FIELDS[p]) is None]


@needs_datasets
def test_every_one_gpu_lambda_system_matches_an_entry_with_its_peaks() -> None:
    assert DATASETS is not None
    mapping = {(r["dataset"], r["name"]): r["hardware_id"] for r in _csv(CURATED / "lambda_names.csv")}
    names: list[tuple[str, str]] = []
    for version in ("v0_2022", "v1_2024"):
        for precision in ("fp32", "fp16"):
            rows = _csv(DATASETS / "lambda-dl-benchmark" / version / f"pytorch-train-throughput-{precision}.csv")
            names += [(version, r["name_gpu"]) for r in rows if float(r["num_gpu"]) == 1]
    for precision in ("fp32", "fp16"):
        for row in _csv(DATASETS / "lambda-dl-benchmark" / "v2_2025" / f"pytorch-train-throughput-v2-{precision}.csv"):
            found = re.search(r"_(\d+)x([A-Z][A-Za-z0-9]+_\d+GB(?:_SXM5?|_PCIe)?)", row[""])
            assert found, f"no GPU in the config id {row['']!r}"
            if found.group(1) == "1":
                names.append(("v2_2025", found.group(2)))
    assert len({n for n in names if n[0] == "v2_2025"}) >= 5
    problems = []
    for key in sorted(set(names)):
        if key not in mapping:
            problems.append(f"{key}: not in lambda_names.csv")
            continue
        missing = _missing_peaks(mapping[key])
        if missing:
            problems.append(f"{key} -> {mapping[key]}: no {missing}")
    assert not problems, "\n".join(problems)


@needs_datasets
def test_every_mlperf_power_accelerator_matches_an_entry_or_is_a_listed_exception() -> None:
    assert DATASETS is not None
    mapping = {r["name"]: r for r in _csv(CURATED / "mlperf_names.csv")}
    folder = DATASETS / "mlperf-power"
    names = {
        r["accelerator_model_name"]
        for f in ("datacenter", "edge")
        for r in _csv(folder / f"data_cleaned_inference_{f}.csv")
    }
    names |= {r["Accelerator Model Name"] for r in _csv(folder / "data_cleaned_training.csv")}
    problems = []
    for name in sorted(names):
        row = mapping.get(name.strip())
        if row is None:
            problems.append(f"{name!r}: not in mlperf_names.csv")
        elif not row["hardware_id"]:
            assert row["reason"], f"{name!r} is an exception without a reason"
        elif missing := _missing_peaks(row["hardware_id"]):
            problems.append(f"{name!r} -> {row['hardware_id']}: no {missing}")
    assert not problems, "\n".join(problems)


@needs_datasets
def test_derived_peaks_agree_with_every_published_figure_or_the_exception_says_why() -> None:
    assert DATASETS is not None
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_catalog import load_curated
    from catalog_gpus import GpuBuilder

    builder = GpuBuilder(DATASETS, CURATED, load_curated(CURATED).citations)
    for part, row in builder.parts():
        builder.build(part, row)
    off: dict[tuple[str, str, str], Any] = {}
    for entry_id, derived in builder.derived.items():
        for found in builder.disagreements(derived, derived, *builder.context[entry_id]):
            off[found[:3]] = found[3:]
    listed = {(r["hardware_id"], r["field"], r["dataset"]): r for r in _csv(CURATED / "peak_exceptions.csv")}
    unexplained = sorted(set(off) - set(listed))
    stale = sorted(set(listed) - set(off))
    assert not unexplained, "derived and published disagree by more than 3 % (derived, published): " + "; ".join(
        f"{k}: {off[k]}" for k in unexplained
    )
    assert not stale, f"peak_exceptions.csv lists agreements: {stale}"
    for row in listed.values():
        assert row["use"] in ("derived", "published") and row["reason"].strip(), row
    compared = sum(len(builder.published(d, *builder.context[i])) for i, d in builder.derived.items())
    assert compared > 100, "the comparison must cover the datasets' figures"


@pytest.mark.parametrize(
    ("name", "catalog_id"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"),
        ("NVIDIA H100 PCIe", "h100-pcie-80gb"),
        ("NVIDIA H100 NVL", "h100-nvl-94gb"),
        ("NVIDIA H200", "h200-sxm-141gb"),
        ("NVIDIA GH200 480GB", "gh200-96gb"),
        ("NVIDIA B200", "b200-sxm-180gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"),
        ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("NVIDIA A10", "a10"),
        ("NVIDIA A40", "a40"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA L40S", "l40s"),
        ("Tesla T4", "t4"),
        ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"),
        ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"),
        ("Tesla V100-PCIE-32GB", "v100-pcie-32gb"),
        ("NVIDIA GeForce RTX 3080", "rtx-3080"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA RTX A5000", "rtx-a5000"),
        ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
        ("Quadro RTX 8000", "quadro-rtx-8000"),
        ("Orin (nvgpu)", "jetson-agx-orin-64gb"),
        ("AMD Instinct MI300X", "mi300x"),
        ("AMD Instinct MI250X", "mi250x"),
        ("AMD Instinct MI100", "mi100"),
        ("AMD Radeon PRO W7900", "radeon-pro-w7900"),
        ("Intel(R) Data Center GPU Max 1550", "intel-max-1550"),
    ],
)
def test_names_drivers_report_match_their_part(name: str, catalog_id: str) -> None:
    assert catalog.match_gpu(name)[0] == catalog_id


@pytest.mark.parametrize("name", ["NVIDIA RTX 5000", "NVIDIA RTX A5000 Ada", "NVIDIA A100", "NVIDIA GeForce RTX 30"])
def test_a_near_miss_never_matches(name: str) -> None:
    assert catalog.match_gpu(name)[0] is None
    assert catalog.match_gpu("NVIDIA RTX A5000")[0] != catalog.match_gpu("NVIDIA RTX 5000 Ada Generation")[0]


def test_every_gpu_figure_names_its_source_and_every_price_its_date() -> None:
    for entry in (e for e in catalog.load() if e.kind == "gpu"):
        if entry.price_usd is not None:
            assert entry.price_date and "price_usd" in entry.sources, entry.id
        for field, source in entry.sources.items():
            # a null field may say why it is null: the part has no such thing, or no source gives it
            reasons = ("none: ", "unknown: ") if getattr(entry, field) is None else ()
            assert source.startswith(("copied: ", "derived: ", *reasons)), (entry.id, field, source)
