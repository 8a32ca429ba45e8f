"""The CPU catalog covers every Xeon Scalable and EPYC part of the CPU datasets, each with derived
peaks that name their rule and a memory bandwidth; the names lscpu reports match their own part and
no near miss; the derived peaks agree with figures computed by hand and with published ones."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import pytest

from app import catalog
from app.catalog.listing import CatalogFilter, page
from app.catalog.price import price_of

ROOT = Path(__file__).resolve().parents[2]
CURATED = ROOT / "app" / "catalog" / "curated"
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)
needs_datasets = pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent")
XEON_SCALABLE = re.compile(r"^Intel Xeon ((Platinum|Gold|Silver|Bronze) \d[1-5]\d\d[A-Z]*\+?|6[579]\d\dP|6\d\d\dE)$")
"""1st-5th gen Xeon Scalable and Xeon 6 (Granite Rapids P, Sierra Forest E) by model number."""


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _plain(name: str) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    from catalog_cpus import plain

    return plain(name)


def _dataset_parts() -> list[str]:
    """Every Xeon Scalable / Xeon 6 and every EPYC model name in the CPU datasets."""
    assert DATASETS is not None
    names = [_plain(r["cpu_name"]) for r in _rows(DATASETS / "codecarbon-cpu" / "intel_cpu_ark_dataset.csv")]
    names = [n for n in names if XEON_SCALABLE.match(n)]
    tiers = {"8": "Platinum", "6": "Gold", "5": "Gold", "4": "Silver", "3": "Bronze"}
    for r in _rows(DATASETS / "intel-ark-kaggle" / "Intel_CPUs.csv"):
        if "Scalable" in r["Product_Collection"] and r["Processor_Number"][:1] in tiers:
            names.append(f"Intel Xeon {tiers[r['Processor_Number'][0]]} {r['Processor_Number']}")
    names += [_plain(r["Name"]) for r in _rows(DATASETS / "codecarbon-cpu" / "amd_cpu_server_dataset.csv")]
    return sorted({n for n in names if "Opteron" not in n})


@needs_datasets
def test_every_xeon_scalable_and_epyc_in_the_datasets_has_peaks_and_bandwidth() -> None:
    names = _dataset_parts()
    assert len(names) > 450, len(names)
    problems = []
    for name in names:
        hit, why = catalog.match_cpu(name)
        if hit is None:
            problems.append(f"{name}: {why}")
            continue
        entry = catalog.get(hit)
        if entry.name != name:
            problems.append(f"{name} matched {entry.name}")
        missing = [
            f for f in ("peak_fp32_tflops", "memory_bandwidth_gb_s", "cores", "threads") if not getattr(entry, f)
        ]
        isa = entry.isa or ""
        if ("VNNI" in isa or "AMX" in isa) and not entry.peak_int8_tops:
            missing.append("peak_int8_tops")
        if ("BF16" in isa or "AMX" in isa) and not entry.peak_bf16_tflops:
            missing.append("peak_bf16_tflops")
        if missing:
            problems.append(f"{name} ({hit}): no {missing}")
    assert not problems, f"{len(problems)} of {len(names)} parts:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ("Intel(R) Xeon(R) Platinum 8480+", "xeon-platinum-8480plus"),
        ("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "xeon-gold-6338"),
        ("Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz", "xeon-gold-6338n"),
        ("Intel(R) Xeon(R) Silver 4210R CPU @ 2.40GHz", "xeon-silver-4210r"),
        ("Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz", "xeon-platinum-8380"),
        ("Intel(R) Xeon(R) 6980P", "xeon-6980p"),
        ("AMD EPYC 9654 96-Core Processor", "epyc-9654"),
        ("AMD EPYC 9654P 96-Core Processor", "epyc-9654p"),
        ("AMD EPYC 7763 64-Core Processor", "epyc-7763"),
        ("AMD EPYC 7773X 64-Core Processor", "epyc-7773x"),
        ("AMD EPYC 7742 64-Core Processor", "epyc-7742"),
        ("AMD EPYC 9754 128-Core Processor", "epyc-9754"),
        ("12th Gen Intel(R) Core(TM) i9-12900K", "core-i9-12900k"),
        ("13th Gen Intel(R) Core(TM) i7-13700K", "core-i7-13700k"),
        ("AMD Ryzen 9 7950X 16-Core Processor", "ryzen-9-7950x"),
        ("AMD Ryzen 9 7950X3D 16-Core Processor", "ryzen-9-7950x3d"),
        ("AMD Ryzen 9 5950X 16-Core Processor", "ryzen-9-5950x"),
        ("AMD Ryzen Threadripper PRO 5995WX 64-Cores", "ryzen-threadripper-pro-5995wx"),
        ("12th Gen Intel(R) Core(TM) i9-12900KF", None),
        ("AMD EPYC 7763X 64-Core Processor", None),
    ],
)
def test_lscpu_names_match_their_own_part_and_near_misses_nothing(reported: str, expected: str | None) -> None:
    assert catalog.match_cpu(reported)[0] == expected


@pytest.mark.parametrize(
    "name",
    [
        "AMD EPYC",
        "AMD EPYC Processor",
        "AMD EPYC-Rome Processor",
        "Intel Xeon Processor",
        "Intel Xeon Processor (Icelake)",
        "Intel(R) Xeon(R) Processor",
        "QEMU Virtual CPU version 2.5+",
        "Common KVM processor",
    ],
)
def test_generic_virtualised_names_stay_unmatched_with_the_reason(name: str) -> None:
    found = catalog.shipped_matcher().cpu(name)
    assert found.catalog_id is None and found.code == "generic", found


def test_every_derived_cpu_peak_names_its_architecture_rule() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from catalog_io import toml

    rules = {a["id"] for a in toml(CURATED / "cpu_architectures.toml")["arch"]}
    cpus = [e for e in catalog.load() if e.kind == "cpu"]
    assert len(cpus) > 500
    for entry in cpus:
        for field in ("peak_fp32_tflops", "peak_bf16_tflops", "peak_fp16_tflops", "peak_int8_tops"):
            if getattr(entry, field) is None:
                continue
            found = re.match(r"derived: ([a-z0-9-]+) \(", entry.sources[field])
            assert found and found.group(1) in rules, f"{entry.id}.{field}: {entry.sources[field]}"
        assert entry.sources["memory_bandwidth_gb_s"].startswith(("copied: ", "derived: ")), entry.id


@pytest.mark.parametrize(
    ("catalog_id", "field", "expected", "why"),
    [
        # by hand: cores x base GHz x FLOP/cycle of the rule the part's microarchitecture should get
        ("epyc-9654", "peak_fp32_tflops", 96 * 2.4 * 32 / 1000, "Zen 4, AVX-512 on 256-bit units"),
        ("epyc-9654", "peak_bf16_tflops", 96 * 2.4 * 64 / 1000, "Zen 4 AVX512_BF16"),
        ("epyc-9965", "peak_fp32_tflops", 192 * 2.25 * 64 / 1000, "Zen 5c, full 512-bit"),
        ("epyc-7742", "peak_fp32_tflops", 64 * 2.25 * 32 / 1000, "Zen 2"),
        ("epyc-7601", "peak_fp32_tflops", 32 * 2.2 * 16 / 1000, "Zen 1, 128-bit units"),
        ("xeon-platinum-8380", "peak_int8_tops", 40 * 2.3 * 256 / 1000, "Ice Lake VNNI"),
        ("xeon-platinum-8480plus", "peak_bf16_tflops", 56 * 2.0 * 1024 / 1000, "Sapphire Rapids AMX"),
        ("xeon-silver-4210r", "peak_fp32_tflops", 10 * 2.4 * 32 / 1000, "Cascade Lake Silver: one FMA unit"),
        ("xeon-gold-5122", "peak_fp32_tflops", 4 * 3.6 * 64 / 1000, "the Gold 5122 has two FMA units"),
        ("xeon-gold-5120", "peak_fp32_tflops", 14 * 2.2 * 32 / 1000, "Gold 5100: one FMA unit"),
        ("xeon-platinum-8380h", "peak_bf16_tflops", 28 * 2.9 * 128 / 1000, "Cooper Lake AVX512_BF16"),
        ("xeon-6780e", "peak_fp32_tflops", 144 * 2.2 * 16 / 1000, "Sierra Forest: AVX2 E-cores"),
        ("core-i9-12900k", "peak_fp32_tflops", (8 * 3.2 * 32 + 8 * 2.4 * 16) / 1000, "hybrid P/E split"),
        # published: TOP500 Frontera (Xeon Platinum 8280) Rpeak 38,745.9 TFLOP/s over 448,448 cores = 86.4 FP64
        # GFLOP/s per core (2.7 GHz x 32 FP64): x2 for FP32, x28 cores
        ("xeon-platinum-8280", "peak_fp32_tflops", 38745.9e3 / 448448 * 2 * 28 / 1000, "TOP500 Frontera Rpeak"),
        # the figure for the EPYC 9654: 7.37 TFLOP/s fp32
        ("epyc-9654", "peak_fp32_tflops", 7.37, "issue 'Catalog breadth'"),
    ],
)
def test_derived_cpu_peaks_agree_with_figures_worked_out_apart(
    catalog_id: str, field: str, expected: float, why: str
) -> None:
    value = getattr(catalog.get(catalog_id), field)
    assert value == pytest.approx(expected, rel=0.01), f"{catalog_id}.{field} = {value}, expected {expected} ({why})"


def test_cpus_without_the_unit_have_no_peak_for_it() -> None:
    assert catalog.get("epyc-7763").peak_bf16_tflops is None, "Zen 3 has no BF16 unit"
    assert catalog.get("xeon-platinum-8380").peak_bf16_tflops is None, "Ice Lake has no BF16 unit"
    assert catalog.get("xeon-gold-6148").peak_int8_tops is None, "Skylake-SP has no VNNI"
    assert catalog.get("xeon-6780e").peak_bf16_tflops is None, "Sierra Forest has no AMX"


def test_memory_bandwidth_is_the_rows_or_channels_times_speed() -> None:
    assert catalog.get("epyc-9654").memory_bandwidth_gb_s == 460.8, "stated by amd.com's row"
    assert catalog.get("epyc-7282").memory_bandwidth_gb_s == 85.3, "the row's figure wins over 8 x 3200"
    assert catalog.get("xeon-platinum-8480plus").memory_bandwidth_gb_s == pytest.approx(8 * 4800 * 8 / 1000)
    assert catalog.get("xeon-6980p").memory_bandwidth_gb_s == pytest.approx(12 * 6400 * 8 / 1000)
    assert catalog.get("xeon-6767p").memory_bandwidth_gb_s == pytest.approx(8 * 6400 * 8 / 1000)
    assert catalog.get("ryzen-9-7950x").memory_bandwidth_gb_s == pytest.approx(2 * 5200 * 8 / 1000)


@pytest.mark.parametrize(
    ("catalog_id", "usd", "basis"),
    [
        ("xeon-platinum-8380", 9359, "quote"),  # OpenVINO's price per socket, dated at release
        ("xeon-platinum-8490h", 17000, "quote"),
        ("epyc-9654", 11805, "quote"),  # amd.com 1kU, dated by the scrape
        ("xeon-platinum-8180", 10009, "quote"),  # Intel ARK (Kaggle) recommended customer price
        ("xeon-platinum-8592plus", None, None),  # no dataset prices it: no price
    ],
)
def test_the_listing_and_the_price_rule_agree_on_cpu_prices(catalog_id: str, usd: float | None, basis: str) -> None:
    entry = catalog.get(catalog_id)
    listed = {e.id: e for e in page(catalog.load(), CatalogFilter(kind="cpu"), limit=1000, offset=0).items}
    price = price_of(entry)
    assert listed[catalog_id].price == price
    if usd is None:
        assert price is None
    else:
        assert price is not None and (price.usd, price.basis) == (usd, basis) and price.date and price.source
