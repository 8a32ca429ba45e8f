"""A CPU figure nothing in the lab calibrates carries the band its kind earned out of sample: eager
PyTorch and ONNX Runtime, whose level the lab CPUs' figures set, the lab level's (each lab machine
predicted from the others); a runtime they never measured, the uncalibrated model's."""

from __future__ import annotations

from typing import Any

from app.perfmodel import lab_levels
from app.perfmodel.bands import as_pct
from app.perfmodel.predict import band_of
from app.recommender.estimators.modelled import LAB_LEVEL, _band
from testkit.factories import Api


def cpu_estimates(api: Api, runtime: str, precision: str = "fp32") -> list[dict[str, Any]]:
    return [c["estimate"] for c in cpu_candidates(api, runtime, precision)]


def cpu_candidates(api: Api, runtime: str, precision: str) -> list[dict[str, Any]]:
    body = {
        "workload": "resnet50",
        "task": "infer",
        "scope": "catalog",
        "batch_size": 8,
        "constraints": {"runtimes": [runtime], "precisions": [precision], "device_kinds": ["cpu"]},
        "limit": 1000,
    }
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.admin)
    assert response.status_code == 200, response.text
    return [c for c in response.json()["candidates"] if c["estimate"]["source"] == "model"]


def test_eager_pytorch_on_an_unmeasured_cpu_carries_the_lab_level_band(api: Api) -> None:
    level, alone = band_of(lab_levels.BAND), band_of("cpu-uncalibrated")
    assert 0 < level < alone  # the level narrowed what the model alone could say
    found = cpu_estimates(api, "torch-eager")
    assert len(found) > 50  # every catalog CPU with an fp32 peak, nothing in the lab calibrating them
    assert {round(e["error_pct"], 6) for e in found} == {round(as_pct(level), 6)}
    assert all(f"calibrated by {LAB_LEVEL}" in e["explanation"] for e in found)


def test_only_the_runtimes_the_lab_cpus_measured_are_levelled() -> None:
    assert lab_levels.levelled("cpu", "torch-eager") and lab_levels.levelled("cpu", "onnxruntime-cpu")
    assert not lab_levels.levelled("gpu", "torch-eager")
    for runtime in ("torch-compile", "openvino", "tensorflow", "litert"):
        assert not lab_levels.levelled("cpu", runtime)
        assert _band("cpu", runtime, None, "device", part=True, unit=None) == band_of("cpu-uncalibrated")
    assert _band("cpu", "onnxruntime-cpu", None, "device", part=True, unit=None) == band_of(lab_levels.BAND)
    assert _band("gpu", "torch-eager", None, "device", part=False, unit=None) == band_of("gpu-uncalibrated-device")
    # the lab figures measured the vector units: a precision on AMX's tiles is the model's alone
    assert lab_levels.levelled("cpu", "torch-eager", "vector") and not lab_levels.levelled("cpu", "torch-eager", "tile")
    assert _band("cpu", "torch-eager", None, "device", part=True, unit="tile") == band_of("cpu-uncalibrated")


def test_eager_bf16_on_amx_is_the_model_alone_at_the_tile_factor(api: Api) -> None:
    """The lab level was measured on the vector units: eager bf16 on an AMX part carries the uncalibrated
    band, and its speed over fp32 is the eager tile factors' (an Emerald Rapids VM measured 1.0-1.8x its
    fp32 on ResNet-50 at batch 1 and 8, where AMX's peak is 16x)."""
    level, alone = band_of(lab_levels.BAND), band_of("cpu-uncalibrated")
    by_part = {
        precision: {c["hardware"]["catalog_id"]: c["estimate"] for c in cpu_candidates(api, "torch-eager", precision)}
        for precision in ("bf16", "fp32")
    }
    amx, cooper = by_part["bf16"]["xeon-platinum-8580"], by_part["bf16"]["xeon-gold-6330h"]
    assert round(amx["error_pct"], 6) == round(as_pct(alone), 6)
    assert round(cooper["error_pct"], 6) == round(as_pct(level), 6)  # AVX512_BF16: the vector units
    fp32 = by_part["fp32"]["xeon-platinum-8580"]
    assert 1.0 < amx["throughput_samples_per_s"] / fp32["throughput_samples_per_s"] < 3.0
