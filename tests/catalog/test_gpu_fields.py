"""The GPU fields beyond the peaks: GPU-to-GPU link bandwidth, form factor and power-limit range, each
from a dataset or a curated rule with its citation, and null only with the reason in ``sources``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import catalog

ROOT = Path(__file__).resolve().parents[2]
CURATED = ROOT / "app" / "catalog" / "curated"
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)
BEFORE_VOLTA = {"pascal"}
NULL_REASONS = ("none: ", "unknown: ")


def _gpus() -> list[catalog.CatalogHardware]:
    return [e for e in catalog.load() if e.kind == "gpu"]


def test_every_sxm_or_oam_datacenter_part_has_a_link_figure_or_a_listed_reason() -> None:
    modules = [e for e in _gpus() if e.form_factor in ("sxm", "oam") and e.architecture not in BEFORE_VOLTA]
    assert len(modules) >= 20
    for entry in modules:
        source = entry.sources.get("nvlink_gb_s", "")
        if entry.nvlink_gb_s is None:
            assert source.startswith(NULL_REASONS) and len(source) > 20, entry.id
        else:
            assert source.startswith(("copied: ", "derived: ")), (entry.id, source)


@pytest.mark.parametrize(
    ("catalog_id", "gb_s"),
    [
        ("v100-sxm2-16gb", 300),
        ("a100-sxm4-80gb", 600),
        ("a100-pcie-80gb", 600),  # with its NVLink bridge partner
        ("h100-sxm5-80gb", 900),
        ("h100-nvl-94gb", 600),
        ("h200-sxm-141gb", 900),
        ("gh200-96gb", 900),
        ("b200-sxm-180gb", 1800),
        ("mi250x", 800),
        ("mi300x", 896),
    ],
)
def test_link_bandwidth_of_known_parts(catalog_id: str, gb_s: float) -> None:
    assert catalog.get(catalog_id).nvlink_gb_s == gb_s


@pytest.mark.parametrize(
    "catalog_id", ["rtx-4090", "rtx-5090", "l40s", "l4", "v100-pcie-16gb", "rtx-pro-6000-blackwell"]
)
def test_parts_without_a_gpu_link_say_so(catalog_id: str) -> None:
    entry = catalog.get(catalog_id)
    assert entry.nvlink_gb_s is None and entry.sources["nvlink_gb_s"].startswith("none: ")


@pytest.mark.parametrize(
    ("catalog_id", "form_factor"),
    [
        ("h100-sxm5-80gb", "sxm"),
        ("a100-sxm4-80gb", "sxm"),  # TechPowerUp says OAM: the name rule wins
        ("h100-pcie-80gb", "pcie"),
        ("h100-nvl-94gb", "pcie"),
        ("mi300x", "oam"),
        ("mi250x", "oam"),  # TechPowerUp says dual-slot: the name rule wins
        ("intel-max-1550", "oam"),
        ("jetson-agx-orin-64gb", "soc"),
        ("gh200-96gb", "mezzanine"),
        ("rtx-2080-max-q", "mezzanine"),
        ("rtx-4090", "pcie"),
    ],
)
def test_form_factor_by_rule(catalog_id: str, form_factor: str) -> None:
    entry = catalog.get(catalog_id)
    assert entry.form_factor == form_factor
    assert entry.sources["form_factor"].startswith("derived: ")


def test_a_power_limit_range_holds_the_tdp_and_names_its_datasheet() -> None:
    ranged = [e for e in _gpus() if e.power_limit_min_w is not None or e.power_limit_max_w is not None]
    assert len(ranged) >= 10
    for entry in ranged:
        low = entry.power_limit_min_w or 0.0
        high = entry.power_limit_max_w or float("inf")
        assert entry.tdp_w is not None and low <= entry.tdp_w <= high, entry.id
        for field in ("power_limit_min_w", "power_limit_max_w"):
            if getattr(entry, field) is not None:
                assert entry.sources[field].startswith("copied: "), (entry.id, field)
    assert catalog.get("l4").power_limit_min_w == 40 and catalog.get("h100-pcie-80gb").power_limit_max_w == 350


def test_a_reason_for_a_null_field_is_only_given_where_the_field_is_null() -> None:
    for entry in _gpus():
        for field, source in entry.sources.items():
            if source.startswith(NULL_REASONS):
                assert getattr(entry, field) is None, (entry.id, field)


@pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent")
def test_a_link_rule_agrees_with_epochs_figure_where_both_give_one() -> None:
    assert DATASETS is not None
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_catalog import load_curated
    from catalog_gpus import LINK_COLUMN, GpuBuilder, first_rule
    from catalog_io import number

    builder = GpuBuilder(DATASETS, CURATED, load_curated(CURATED).citations)
    compared = 0
    for part, row in builder.parts():
        entry = builder.build(part, row)
        epoch = builder.context[entry["id"]][1]
        rule = first_rule(builder.rules.links, entry["id"], architecture=entry["architecture"])
        found = number(epoch[1][LINK_COLUMN]) if epoch else None
        if not found or rule is None or rule["basis"] == "unknown":
            continue
        if rule["basis"] == "none":
            assert found <= 64e9, f"{entry['id']}: Epoch's {found} B/s is more than a PCIe bus"
        else:
            assert number(rule["nvlink_gb_s"]) == found / 1e9, entry["id"]
        compared += 1
    assert compared >= 10


@pytest.mark.parametrize(
    ("catalog_id", "field", "value", "cited"),
    [
        # TechPowerUp lists 80 MB for these GA100 boards, 40 for the SXM4 80 GB: the whitepaper says 40
        ("a100-pcie-80gb", "l2_mb", 40.0, "A100 Tensor Core GPU Architecture whitepaper"),
        ("a800-pcie-80gb", "l2_mb", 40.0, "A100 Tensor Core GPU Architecture whitepaper"),
        # TechPowerUp has the V100's SXM2 and PCIe powers the other way round
        ("v100-sxm2-16gb", "tdp_w", 300.0, "V100 datasheet"),
        ("v100-pcie-16gb", "tdp_w", 250.0, "V100 datasheet"),
        # the NVL boards are rated below what TechPowerUp's maximum boost clock gives (965.1)
        ("h200-nvl", "peak_bf16_tflops", 835.5, "H200 Tensor Core GPU datasheet"),
        ("h100-nvl-94gb", "peak_int8_tops", 1670.5, "H100 NVL product brief"),
    ],
)
def test_vendor_figures_where_techpowerup_is_wrong(catalog_id: str, field: str, value: float, cited: str) -> None:
    """A figure a vendor document contradicts TechPowerUp on is the vendor's, and says which document."""
    entry = catalog.get(catalog_id)
    assert getattr(entry, field) == value
    assert cited in entry.sources[field]
