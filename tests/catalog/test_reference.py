"""The reference runs hwadvisor ships (an H200 and an H100): what they hold, which of their results
stand as evidence, and how a lab that owns no GPU sees them (measured, under their own source, and
calibrating the model for the other parts of their vendor) through the API."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest

from app import catalog
from app.catalog import reference
from app.catalog.published import parse_csv, shipped
from app.contracts import PowerSource, Precision, Task
from app.errors import InvalidInput
from app.perfmodel.bands import as_pct, in_regime
from app.perfmodel.predict import band_of, predict
from app.perfmodel.references import at_batch
from app.recommender.estimators.base import Config, Evidence
from app.recommender.estimators.modelled import Modelled
from app.recommender.evidence import LAB, catalog_hardware
from testkit.factories import Api

SOURCE = "reference:hwadvisor-h200-sxm-141gb"
H100_SOURCE = "reference:hwadvisor-h100-sxm5-80gb"


def run_of(part: str) -> reference.ReferenceRun:
    (run,) = [r for r in reference.shipped() if r.hardware_id == part]
    return run


def h200() -> reference.ReferenceRun:
    return run_of("h200-sxm-141gb")


def test_the_h200_run_holds_its_machine_its_runs_and_every_result() -> None:
    run = h200()
    assert run.source == SOURCE and run.machine.device(run.device).name == "NVIDIA H200"  # type: ignore[union-attr]
    assert {r.suite for r in run.runs} == {
        "gpu_truth",
        "gpu_recheck",
        "gpu_reference",
        "gpu_batches",
        "gpu_batches_recheck",
        "gpu_batch1_recheck",
    }
    assert len(run.results) >= 200 and all(e.run in {r.id for r in run.runs} for e in run.results)
    assert run.machine.software.libraries["torch.cuda"] == "13.0"
    gemm = [
        e.result
        for e in run.results
        if e.settled and e.result.workload == "gemm_8192" and e.result.precision.value == "bf16"
    ]
    # one settled figure per run that measured it (the recheck's, the reference grid's, and session 45's
    # machine twice: its second job ran the grid again minutes later)
    assert len(gemm) == 4 and all(600 < (g.achieved_tflops or 0) < 800 for g in gemm)
    # NVML's counter read over a half-second region can run a few percent above the 700 W limit (the notes say so)
    assert gemm[0].power_source is PowerSource.nvml and 650 < (gemm[0].mean_power_w or 0) < 1.1 * 700
    assert any("above the board's 700 W limit" in note for note in run.notes)


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


def test_the_h100_run_measured_every_zoo_workload_in_three_precisions_settled() -> None:
    run = run_of("h100-sxm5-80gb")
    assert run.source == H100_SOURCE and [r.suite for r in run.runs] == ["gpu_reference", *["gpu_second_machine"] * 2]
    # the second machine ran its job twice (the agent stopped at the session's time, the next run took the job)
    assert len({r.gpu_uuid for r in run.runs}) == 2 and run.runs[1].gpu_uuid == run.runs[2].gpu_uuid
    assert any("3 runs on 2 machines" in note for note in run.notes)
    assert run.machine.device(run.device).name == "NVIDIA H100 80GB HBM3"  # type: ignore[union-attr]
    models = {
        (e.result.workload, e.result.task, e.result.precision.value, e.result.batch_size)
        for e in run.results
        if e.settled and e.result.task in (Task.infer, Task.train)
    }
    # the reference grid, then inference at 8, 32, 128 and training at 128
    assert len(models) >= 11 * 2 * 3 * 2 + 11 * 3 * 4
    assert ("resnet20", Task.train, "tf32", 256) in models and ("fcn_r", Task.infer, "bf16", 1) in models


def measured_by_each(run: reference.ReferenceRun, workload: str, task: Task, precision: str, batch: int) -> list[float]:
    """Each machine's settled figure of the config."""
    found = [
        e.result.throughput_samples_per_s or 0.0
        for e in run.results
        if e.settled
        and (e.result.workload, e.result.task, e.result.precision.value, e.result.batch_size)
        == (workload, task, precision, batch)
    ]
    assert found and all(found)
    return found


def measured_in(run: reference.ReferenceRun, workload: str, task: Task, precision: str, batch: int) -> float:
    """The part's figure of the config: the median of its machines'."""
    return statistics.median(measured_by_each(run, workload, task, precision, batch))


def test_a_lab_without_gpus_sees_the_reference_gpus_measured_and_the_others_calibrated_by_them(api: Api) -> None:
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
    estimates = {c["hardware"]["catalog_id"]: c["estimate"] for c in response.json()["candidates"]}
    for part, source in (("h200-sxm-141gb", SOURCE), ("h100-sxm5-80gb", H100_SOURCE)):
        e = estimates[part]
        assert e["kind"] == "measured" and e["source"] == source
        measured = measured_in(run_of(part), "resnet50", Task.infer, "bf16", 256)
        assert e["throughput_samples_per_s"] == pytest.approx(measured)
        assert "measured by hwadvisor's own reference run" in e["explanation"]
        # at batch 256 the GPU bounds the step: another machine of the part measures within a few percent
        assert regime_of(part, "resnet50", Task.infer, "bf16", 256) == "device"
        each = measured_by_each(run_of(part), "resnet50", Task.infer, "bf16", 256)
        spread = (max(each) - min(each)) / 2 / measured * 100
        assert e["error_pct"] == pytest.approx(max(1.0, spread, as_pct(band_of("gpu-machine-device"))))
        assert "another machine with this part measures within" in e["explanation"]
    a100 = estimates["a100-sxm4-80gb"]
    assert a100["kind"] == "predicted"
    assert (
        f"calibrated by hwadvisor's reference run {H100_SOURCE}, hwadvisor's reference run {SOURCE}"
        in (a100["explanation"])
    )
    # the model says how the parts differ, each reference how fast eager PyTorch runs it: the geometric
    # mean of the two model-ratio transfers, each moved by its run's split correction from its step to the
    # A100's (app/perfmodel/split.py), which at batch 256, where the GPU bounds all three, is under 1%
    model = {
        part: modelled(part, "resnet50", Task.infer, "bf16", 256)
        for part in ("a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb")
    }
    transfers = [
        measured_in(run_of(part), "resnet50", Task.infer, "bf16", 256) * model["a100-sxm4-80gb"] / model[part]
        for part in ("h100-sxm5-80gb", "h200-sxm-141gb")
    ]
    assert a100["throughput_samples_per_s"] == pytest.approx(math.sqrt(transfers[0] * transfers[1]), rel=0.01)
    a100_regime = regime_of("a100-sxm4-80gb", "resnet50", Task.infer, "bf16", 256)
    assert a100["error_pct"] == pytest.approx(as_pct(band_of(in_regime("gpu-transfer", a100_regime))))
    assert estimates["mi300x"]["source"] == "model", "a CUDA stack's measurement is never carried to another vendor"


def h100_resnet50_training(api: Api, batch: int) -> dict[str, Any]:
    """The H100's ResNet-50 fp32 training estimate at ``batch``, through the predictions API: a batch
    its reference run (32, 64, 128 and 256) did not measure, so its own run's curve, predicted."""
    body = {
        "catalog_id": "h100-sxm5-80gb",
        "workload": "resnet50",
        "task": "train",
        "runtime": "torch-eager",
        "precision": "fp32",
        "batch_size": batch,
    }
    response = api.client.post("/api/v1/predictions", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    e: dict[str, Any] = response.json()
    assert e["kind"] == "predicted" and e["source"] == H100_SOURCE
    return e


def test_a_reference_part_asked_at_a_batch_its_run_did_not_measure_follows_its_own_runs_curve(api: Api) -> None:
    e = h100_resnet50_training(api, 96)
    assert "reference:hwadvisor-h200" not in e["explanation"], "the H100's own run speaks for the H100 alone"
    run = run_of("h100-sxm5-80gb")
    ratios = [
        (
            b,
            math.log(
                measured_in(run, "resnet50", Task.train, "fp32", b)
                / modelled("h100-sxm5-80gb", "resnet50", Task.train, "fp32", b)
            ),
        )
        for b in (32, 64, 128, 256)
    ]
    expected = modelled("h100-sxm5-80gb", "resnet50", Task.train, "fp32", 96) * math.exp(at_batch(ratios, 96))
    assert e["throughput_samples_per_s"] == pytest.approx(expected, rel=1e-6)
    # between the run's batches: the band another machine's batches earned in the step's regime, leave
    # one batch out
    # (and never narrower than how far machines of the part measure apart: the run stands for any H100)
    which = regime_of("h100-sxm5-80gb", "resnet50", Task.train, "fp32", 96)
    between = band_of(in_regime("gpu-between", which))
    machine = band_of(in_regime("gpu-machine", which))
    assert e["error_pct"] == pytest.approx(as_pct(max(between, machine)))


def test_beyond_its_runs_batches_a_reference_part_takes_the_wider_band(api: Api) -> None:
    e = h100_resnet50_training(api, 16)
    which = regime_of("h100-sxm5-80gb", "resnet50", Task.train, "fp32", 16)
    widest = max(band_of(in_regime(name, which)) for name in ("gpu-between", "gpu-transfer", "gpu-machine"))
    assert e["error_pct"] == pytest.approx(as_pct(widest))


def test_far_beyond_the_runs_batches_a_figure_takes_the_band_that_far_earned(api: Api) -> None:
    """At 8x the runs' largest batch, where the GPU bounds the step, the nearest batch's ratio errs as
    far as it was seen to (``gpu-beyond``); within 2x of it, as between the batches."""
    which = regime_of("h100-sxm5-80gb", "resnet50", Task.infer, "bf16", 2048)
    assert which == "device"
    far = band_of(in_regime("gpu-beyond", which))
    assert far > band_of(in_regime("gpu-transfer", which))
    for part in ("h100-sxm5-80gb", "a100-sxm4-80gb"):  # its own run's curve; transferred from the runs
        e = reference_prediction(api, part, "bf16", 2048)
        assert e["error_pct"] == pytest.approx(as_pct(far))
        assert "at batches far from this one" in e["explanation"]
        near = reference_prediction(api, part, "bf16", 512)
        assert near["error_pct"] < as_pct(far) and "far from" not in near["explanation"]
        assert near["error_pct"] == pytest.approx(as_pct(band_of(in_regime("gpu-transfer", which))))


def reference_prediction(api: Api, part: str, precision: str, batch: int) -> dict[str, Any]:
    """The part's ResNet-50 inference estimate in torch eager, through the predictions API."""
    body = {
        "catalog_id": part,
        "workload": "resnet50",
        "task": "infer",
        "runtime": "torch-eager",
        "precision": precision,
        "batch_size": batch,
    }
    response = api.client.post("/api/v1/predictions", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    e: dict[str, Any] = response.json()
    return e


def test_a_reference_figure_where_the_host_bounds_the_step_carries_how_far_another_machine_measures(
    api: Api,
) -> None:
    """ResNet-50 at batch 1 is the host's: the same H200 config on several machines measured up to 2.2x
    apart, so the H100 run's one measurement is no ±1% figure for every H100."""
    e = reference_prediction(api, "h100-sxm5-80gb", "fp32", 1)
    assert e["kind"] == "measured" and e["source"] == H100_SOURCE
    assert regime_of("h100-sxm5-80gb", "resnet50", Task.infer, "fp32", 1) == "host"
    host = as_pct(band_of("gpu-machine-host"))
    assert e["error_pct"] == pytest.approx(host) and host > 50.0
    assert f"measures within ±{host:.0f}% (the host bounds this step)" in e["explanation"]
    assert e["throughput_samples_per_s"] == pytest.approx(
        measured_in(run_of("h100-sxm5-80gb"), "resnet50", Task.infer, "fp32", 1)
    )
    # a part no run measured, transferred from the runs, stands for any machine of it too: no narrower
    gh200 = reference_prediction(api, "gh200-96gb", "fp32", 1)
    transfer = as_pct(band_of("gpu-transfer-host"))
    assert gh200["kind"] == "predicted" and gh200["error_pct"] == pytest.approx(max(host, transfer))


def test_a_reference_part_several_machines_measured_is_their_median(api: Api) -> None:
    each = measured_by_each(h200(), "resnet50", Task.infer, "fp32", 1)
    assert len(each) >= 3 and max(each) / min(each) > 1.05
    e = reference_prediction(api, "h200-sxm-141gb", "fp32", 1)
    assert e["kind"] == "measured" and e["source"] == SOURCE
    assert e["throughput_samples_per_s"] == pytest.approx(statistics.median(each))
    assert f"the median of {len(each)} runs on machines with this part" in e["explanation"]
    assert e["error_pct"] >= as_pct(band_of("gpu-machine-host"))


def test_the_h200_runs_measured_the_batches_between_its_own_on_other_machines() -> None:
    """The gpu_batches runs hold what the between band is measured on: each inference batch 8, 32 and
    128 and training batch 64 and 128 of every zoo workload, on machines other than gpu_reference's."""
    run = h200()
    suite_of = {r.id: r.suite for r in run.runs}
    uuid_of = {r.id: r.gpu_uuid for r in run.runs}
    grids = {r.gpu_uuid for r in run.runs if r.suite == "gpu_reference"}
    between = [e for e in reference.settled_models(run) if suite_of[e.run].startswith("gpu_batch")]
    batches = {(e.result.task, e.result.batch_size) for e in between}
    assert batches >= {(Task.infer, 8), (Task.infer, 32), (Task.infer, 128), (Task.train, 64), (Task.train, 128)}
    assert all(uuid_of[e.run] not in grids for e in between)
    assert any("two runs measured" in note for note in run.notes)


def regime_of(part: str, workload: str, task: Task, precision: str, batch: int) -> str:
    """Whether the model puts the eager step on the host or the device, as the bands are split."""
    found = predict(workload, task, Precision(precision), batch, catalog.get(part), runtime="torch-eager")
    assert found is not None
    return found.regime


def modelled(part: str, workload: str, task: Task, precision: str, batch: int) -> float:
    """The performance model alone, as a lab with nothing measured gets it."""
    guess = Modelled.estimate(
        catalog_hardware(catalog.get(part)),
        Config("torch-eager", Precision(precision), batch, None, LAB),
        Evidence([], workload=workload, task=task),
    )
    assert guess is not None
    return guess.throughput_samples_per_s
