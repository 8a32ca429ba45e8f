"""A lab CPU's peaks bounded by what its probe found (app/catalog/probed.py): a VM that hides AMX or
AVX-512 is never modelled at the rate of units it cannot use."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.catalog import CatalogHardware, get, load
from app.catalog.probed import PROBED_SUFFIX, as_probed, bounded
from app.contracts import Precision
from app.perfmodel.device import matrix_unit
from app.probes.cpu import DL_FEATURES_ARM, DL_FEATURES_X86

EMERALD = "xeon-platinum-8580"
SAPPHIRE_VM = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_fp16",
               "avx512_vnni", "amx_tile", "amx_bf16", "amx_int8"]  # fmt: skip
NO_AMX = [f for f in SAPPHIRE_VM if not f.startswith("amx")]
PEAKS = ("peak_fp32_tflops", "peak_bf16_tflops", "peak_fp16_tflops", "peak_int8_tops")


def test_a_part_whose_probe_found_every_unit_is_the_part_as_sold() -> None:
    part = get(EMERALD)
    assert as_probed(part, SAPPHIRE_VM) is part
    assert as_probed(part, None) is part and as_probed(part, []) is part  # an old agent's spec: nothing said


def test_a_vm_hiding_amx_runs_bf16_and_int8_at_avx512s_rates() -> None:
    part = get(EMERALD)
    assert part.peak_fp32_tflops and part.peak_bf16_tflops and part.peak_int8_tops
    assert part.peak_bf16_tflops == pytest.approx(16 * part.peak_fp32_tflops)  # AMX's
    probed = as_probed(part, NO_AMX)
    assert probed.peak_fp32_tflops == part.peak_fp32_tflops
    assert probed.peak_bf16_tflops == pytest.approx(2 * part.peak_fp32_tflops)  # VDPBF16PS
    assert probed.peak_int8_tops == pytest.approx(4 * part.peak_fp32_tflops)  # VPDPBUSD
    assert probed.id == EMERALD + PROBED_SUFFIX and probed.name == part.name
    assert bounded(probed) == [
        "bf16_tflops: no amx_bf16; avx512_bf16: 2x fp32",
        "int8_tops: no amx_int8; VNNI: 4x fp32",
    ]
    assert bounded(part) == []
    assert probed.sources["peak_bf16_tflops"].endswith(part.sources["peak_bf16_tflops"])  # the part's still said


def test_a_vm_without_avx512_or_bf16_instructions() -> None:
    part = get(EMERALD)
    assert part.peak_fp32_tflops
    probed = as_probed(part, ["sse4_2", "avx", "avx2", "fma"])
    assert probed.peak_fp32_tflops == pytest.approx(part.peak_fp32_tflops / 2)  # two 256-bit FMAs, not 512
    assert probed.peak_bf16_tflops is None  # no bf16 math at all: PyTorch refuses it (app/bench/precision.py)
    assert probed.peak_int8_tops == pytest.approx(2 * probed.peak_fp32_tflops)  # before VNNI


def test_parts_the_bounds_do_not_touch() -> None:
    zen3 = get("epyc-7203p")  # AVX2 on 256-bit units, no bf16 or int8 peak given
    assert as_probed(zen3, ["sse4_2", "avx", "avx2", "fma"]) is zen3
    zen4 = get("epyc-9654")  # AVX-512 on 256-bit units: its bf16 is 2x fp32 already
    assert as_probed(zen4, [*NO_AMX]) is zen4
    gpu = next(h for h in load() if h.kind == "gpu")
    assert as_probed(gpu, ["avx2"]) is gpu
    emerald = get(EMERALD)  # an Arm probe's features say nothing of x86 units (the catalog has no Arm CPU yet)
    assert as_probed(emerald, list(DL_FEATURES_ARM)) is emerald


CPUS = [h for h in load() if h.kind == "cpu"]


@given(st.sampled_from(CPUS), st.sets(st.sampled_from(DL_FEATURES_X86)))
def test_a_probe_only_ever_lowers_a_peak(part: CatalogHardware, features: set[str]) -> None:
    probed = as_probed(part, sorted(features))
    for field in PEAKS:
        before, after = getattr(part, field), getattr(probed, field)
        assert before is not None or after is None  # never a peak the catalog lacks
        if before is not None and after is not None:
            assert after <= before * 1.000001
    assert (probed is part) == (not bounded(probed))


def test_which_matrix_unit_a_precision_runs_on() -> None:
    """AMX's tiles for the part as sold, the vector units once the probe bounds it; fp32 and GPUs: none."""
    part = get(EMERALD)
    assert matrix_unit(part, Precision.bf16) == matrix_unit(part, Precision.int8) == "tile"
    probed = as_probed(part, NO_AMX)
    assert matrix_unit(probed, Precision.bf16) == matrix_unit(probed, Precision.int8) == "vector"
    assert matrix_unit(get("epyc-9654"), Precision.bf16) == "vector"  # Zen 4's AVX512_BF16
    assert matrix_unit(part, Precision.fp32) is None and matrix_unit(part, Precision.fp16) is None  # no fp16 peak
    assert matrix_unit(get("h100-sxm5-80gb"), Precision.bf16) is None
