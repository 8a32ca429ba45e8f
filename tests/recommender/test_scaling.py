"""The cross-hardware transfer, on workloads whose true time model is known."""

from __future__ import annotations

import pytest

from app.catalog import get
from app.contracts import Precision
from app.recommender import scaling
from app.recommender.scaling import Reference, transfer

GPUS = ("h100-sxm5-80gb", "a100-sxm4-80gb", "l4", "rtx-a6000", "a10", "l40s")


def true_throughput(catalog_id: str, compute: float, memory: float, vector: float, precision: Precision) -> float:
    """A workload made of exactly this much compute, memory and vector work (model units)."""
    f = scaling.features(get(catalog_id), precision)
    return 1.0 / (compute * f["compute"] + memory * f["memory"] + vector * f["vector"])


@pytest.mark.parametrize(("compute", "memory", "vector"), [(1.0, 0.0, 0.0), (0.2, 3.0, 0.0), (0.5, 1.0, 2.0)])
def test_a_consistent_workload_is_recovered_exactly(compute: float, memory: float, vector: float) -> None:
    refs = [
        Reference(g, get(g), Precision.bf16, true_throughput(g, compute, memory, vector, Precision.bf16))
        for g in GPUS[1:]
    ]
    result = transfer(refs, get(GPUS[0]), Precision.bf16)
    assert result is not None and result.learned
    assert result.throughput == pytest.approx(true_throughput(GPUS[0], compute, memory, vector, Precision.bf16))
    assert result.error_pct == pytest.approx(scaling.MIN_ERROR_PCT)


def test_with_too_few_references_the_split_is_assumed_and_the_band_is_wide() -> None:
    one = [Reference("a100", get("a100-sxm4-80gb"), Precision.bf16, 4500.0)]
    result = transfer(one, get("h100-sxm5-80gb"), Precision.bf16)
    assert result is not None and not result.learned
    assert result.error_pct == scaling.FEW_REFERENCES_ERROR_PCT
    # half compute, half memory on the A100: each half scales with the H100's gain in that resource
    a100, h100 = get("a100-sxm4-80gb"), get("h100-sxm5-80gb")
    assert a100.peak_bf16_tflops and h100.peak_bf16_tflops and a100.memory_bandwidth_gb_s and h100.memory_bandwidth_gb_s
    seconds = 0.5 / 4500 * (a100.peak_bf16_tflops / h100.peak_bf16_tflops) + 0.5 / 4500 * (
        a100.memory_bandwidth_gb_s / h100.memory_bandwidth_gb_s
    )
    assert result.throughput == pytest.approx(1 / seconds)


def test_hardware_without_a_peak_for_the_precision_is_not_predicted() -> None:
    refs = [Reference(g, get(g), Precision.bf16, 1000.0) for g in GPUS[1:]]
    assert scaling.missing_for(get("t4"), Precision.bf16) is not None  # Turing has no bf16
    assert transfer(refs, get("t4"), Precision.bf16) is None


def test_noisy_references_widen_the_band() -> None:
    noise = [1.0, 1.3, 0.75, 1.2, 0.8]
    refs = [
        Reference(g, get(g), Precision.bf16, true_throughput(g, 0.3, 1.0, 0.0, Precision.bf16) * k)
        for g, k in zip(GPUS[1:], noise, strict=True)
    ]
    result = transfer(refs, get(GPUS[0]), Precision.bf16)
    assert result is not None and result.error_pct > 10
