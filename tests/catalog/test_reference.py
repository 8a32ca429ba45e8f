"""The H200 reference run hwadvisor ships: what it holds, which of its results stand as evidence, and
how a lab that owns no GPU sees them (measured, under their own source) through the API."""

from __future__ import annotations

import pytest

from app import catalog
from app.catalog import reference
from app.catalog.published import parse_csv, shipped
from app.contracts import PowerSource, Precision, Task
from app.errors import InvalidInput
from app.recommender.estimators.base import Config, Evidence
from app.recommender.estimators.modelled import Modelled
from app.recommender.evidence import LAB, catalog_hardware
from testkit.factories import Api

SOURCE = "reference:hwadvisor-h200-sxm-141gb"


def h200() -> reference.ReferenceRun:
    (run,) = [r for r in reference.shipped() if r.hardware_id == "h200-sxm-141gb"]
    return run


def test_the_h200_run_holds_its_machine_its_runs_and_every_result() -> None:
    run = h200()
    assert run.source == SOURCE and run.machine.device(run.device).name == "NVIDIA H200"  # type: ignore[union-attr]
    assert {r.suite for r in run.runs} == {"gpu_truth", "gpu_recheck"}
    assert len(run.results) >= 200 and all(e.run in {r.id for r in run.runs} for e in run.results)
    assert run.machine.software.libraries["torch.cuda"] == "13.0"
    gemm = [
        e.result
        for e in run.results
        if e.settled and e.result.workload == "gemm_8192" and e.result.precision.value == "bf16"
    ]
    assert len(gemm) == 1 and 600 < (gemm[0].achieved_tflops or 0) < 800
    assert gemm[0].power_source is PowerSource.nvml and 650 < (gemm[0].mean_power_w or 0) < 740


def test_only_settled_model_results_stand_beside_the_published_ones() -> None:
    run = h200()
    rows = reference.as_published(run)
    settled = {
        (e.result.workload, e.result.task, e.result.precision, e.result.batch_size) for e in run.results if e.settled
    }
    assert rows and all((r.workload, r.task, r.precision, r.batch_size) in settled for r in rows)
    assert all(r.task in (Task.infer, Task.train) and r.source == SOURCE for r in rows)
    assert all(r.mean_power_w is None or r.mean_power_w < 800 for r in rows), "no energy from the first run's regions"
    assert all(r in shipped() for r in rows)


def test_an_import_may_not_take_a_reference_source() -> None:
    text = "source,hardware_id,hardware_name,workload,runtime,precision,batch_size,throughput_samples_per_s\n"
    text += f"{SOURCE},h200-sxm-141gb,H200,resnet50/infer,torch-eager,bf16,256,99999\n"
    with pytest.raises(InvalidInput, match="reference run hwadvisor ships"):
        parse_csv(text)


def test_a_lab_without_gpus_sees_the_h200_measured_by_the_reference_run(api: Api) -> None:
    (measured,) = [
        e.result
        for e in h200().results
        if e.settled
        and e.result.workload == "resnet50"
        and e.result.task is Task.infer
        and e.result.precision.value == "bf16"
        and e.result.batch_size == 256
    ]
    body = {
        "workload": "resnet50",
        "task": "infer",
        "scope": "catalog",
        "batch_size": 256,
        "constraints": {"runtimes": ["torch-eager"], "precisions": ["bf16"]},
        "limit": 1000,
    }
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    (h200_row,) = [c for c in response.json()["candidates"] if c["hardware"]["catalog_id"] == "h200-sxm-141gb"]
    e = h200_row["estimate"]
    assert e["kind"] == "measured" and e["source"] == SOURCE
    assert e["throughput_samples_per_s"] == pytest.approx(measured.throughput_samples_per_s)
    assert "measured by hwadvisor's own reference run" in e["explanation"]
    (h100,) = [c["estimate"] for c in response.json()["candidates"] if c["hardware"]["catalog_id"] == "h100-sxm5-80gb"]
    assert h100["kind"] == "predicted" and h100["source"] == SOURCE
    assert f"calibrated by hwadvisor's reference run {SOURCE}" in h100["explanation"]
    # the model says how the parts differ, the reference how fast eager PyTorch runs it: model-ratio transfer
    model = {part: modelled(part, "resnet50", Task.infer, "bf16", 256) for part in ("h100-sxm5-80gb", "h200-sxm-141gb")}
    expected = measured.throughput_samples_per_s * model["h100-sxm5-80gb"] / model["h200-sxm-141gb"]  # type: ignore[operator]
    assert h100["throughput_samples_per_s"] == pytest.approx(expected, rel=1e-6)
    (mi300x,) = [c["estimate"] for c in response.json()["candidates"] if c["hardware"]["catalog_id"] == "mi300x"]
    assert mi300x["source"] == "model", "a CUDA stack's measurement is never carried to another vendor"


def modelled(part: str, workload: str, task: Task, precision: str, batch: int) -> float:
    """The performance model alone, as a lab with nothing measured gets it."""
    guess = Modelled.estimate(
        catalog_hardware(catalog.get(part)),
        Config("torch-eager", Precision(precision), batch, None, LAB),
        Evidence([], workload=workload, task=task),
    )
    assert guess is not None
    return guess.throughput_samples_per_s
