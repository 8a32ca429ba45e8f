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


def cpu_estimates(api: Api, runtime: str) -> list[dict[str, Any]]:
    body = {
        "workload": "resnet50",
        "task": "infer",
        "scope": "catalog",
        "batch_size": 8,
        "constraints": {"runtimes": [runtime], "precisions": ["fp32"], "device_kinds": ["cpu"]},
        "limit": 1000,
    }
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.admin)
    assert response.status_code == 200, response.text
    return [c["estimate"] for c in response.json()["candidates"] if c["estimate"]["source"] == "model"]


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
        assert _band("cpu", runtime, None, "device", part=True) == band_of("cpu-uncalibrated")
    assert _band("cpu", "onnxruntime-cpu", None, "device", part=True) == band_of(lab_levels.BAND)
    assert _band("gpu", "torch-eager", None, "device", part=False) == band_of("gpu-uncalibrated-device")
