"""A lab that owns only CPUs asks which GPU to buy: every GPU that fits the budget is answered from the
performance model, with its kind, band and explanation (issue 15's first promise), through the API."""

from __future__ import annotations

from typing import Any

import pytest

from app.catalog import get, reference
from app.catalog import load as catalog_entries
from app.contracts import LLM_PRESETS, Precision, Recommendation, Task
from app.perfmodel import generation
from app.perfmodel.bands import as_pct, in_regime
from app.perfmodel.predict import band_of
from app.perfmodel.profile import TENSOR_CLASSES
from app.perfmodel.profile import shipped as profiles
from app.recommender.estimators.modelled import GRAPH_GPU_GAP
from app.recommender.ranking import OWNED_ONLY
from app.recommender.reasons import NAMED
from app.recommender.table import render
from testkit.factories import Api, run_report
from testkit.lab import cpu_machine, gpu_machine, measured

BUDGET_W = 300.0
REFERENCES = ("reference:hwadvisor-h100-sxm5-80gb", "reference:hwadvisor-h200-sxm-141gb")
GPUS_UNDER_BUDGET = {"l4", "t4", "a10", "a100-pcie-40gb", "a100-pcie-80gb"}


def cpu_only_lab(api: Api) -> None:
    """One CPU box that measured the two workloads in eager PyTorch, as the quick suite does."""
    spec = cpu_machine("node-cpu")
    _machine_id, token = api.enroll(spec)
    results = [
        measured(8, 25, 110, device="cpu", runtime="torch-eager", precision="fp32", threads=16, power_source="rapl"),
        measured(1, 12, 100, device="cpu", runtime="torch-eager", precision="fp32", threads=16, power_source="rapl"),
    ]
    results += [
        measured(1, 30, 100, device="cpu", runtime="torch-eager", precision="fp32", workload="bert_base", threads=16)
    ]
    assert api.post_run(token, run_report(spec, results=results)).status_code == 201


def ask(api: Api, workload: str) -> dict[str, Any]:
    body = {
        "workload": workload,
        "task": "infer",
        "scope": "catalog",
        "batch_size": 32,
        "constraints": {"power_budget_w": BUDGET_W, "runtimes": ["torch-eager"], "precisions": ["fp16", "bf16"]},
        "limit": 1000,
    }
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_asking_only_the_labs_own_hardware_for_a_gpu_says_how_to_ask_the_catalog(api: Api) -> None:
    cpu_only_lab(api)
    body = {
        "workload": "resnet50",
        "scope": "owned",
        "constraints": {"power_budget_w": BUDGET_W, "device_kinds": ["cuda"]},
    }
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["query"]["scope"] == "owned" and answer["candidates"] == []
    assert OWNED_ONLY in answer["notes"]
    # asked as a user first asks, without a scope: the catalog's GPUs under the budget, predicted
    unscoped = {
        "workload": "resnet50",
        "batch_size": 32,
        "constraints": {"power_budget_w": BUDGET_W, "device_kinds": ["cuda"], "runtimes": ["torch-eager"]},
        "limit": 1000,
    }
    response = api.client.post("/api/v1/recommendations", json=unscoped, headers=api.bearer(api.token("readonly")))
    answer = response.json()
    assert answer["query"]["scope"] == "catalog" and OWNED_ONLY not in answer["notes"]
    listed = {c["hardware"]["catalog_id"] for c in answer["candidates"]}
    assert listed >= GPUS_UNDER_BUDGET
    # the lab's CPU answers the same ask without a device kind: no such note
    del body["constraints"]["device_kinds"]  # type: ignore[attr-defined]
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.json()["candidates"] and OWNED_ONLY not in response.json()["notes"]


@pytest.mark.parametrize("workload", ["resnet50", "bert_base"])
def test_a_cpu_only_lab_is_offered_gpus_with_predicted_figures(api: Api, workload: str) -> None:
    cpu_only_lab(api)
    answer = ask(api, workload)
    gpus = [c for c in answer["candidates"] if c["hardware"]["kind"] == "cuda"]
    offered = {c["hardware"]["catalog_id"] for c in gpus}
    assert offered >= GPUS_UNDER_BUDGET, GPUS_UNDER_BUDGET - offered
    for c in gpus:
        e = c["estimate"]
        # nothing in this lab measured a GPU: the model alone, or calibrated by the reference runs shipped, or a
        # reference run's own measurement of its part (the H100's at batch 32), capped to the budget
        assert e["kind"] == "predicted" and e["source"] in ("model", *REFERENCES)
        own = f"measured by hwadvisor's own reference run ({e['source']})" in e["explanation"]
        if e["source"] != "model" and not own:
            assert f"calibrated by hwadvisor's reference run {e['source']}" in e["explanation"]
        assert e["throughput_low"] < e["throughput_samples_per_s"] < e["throughput_high"]
        assert 5 <= e["error_pct"] < 200
        assert e["power_w"] is not None and e["power_w"] <= BUDGET_W * (1 + 1e-9)
        assert e["memory_gb"] is not None and e["memory_gb"] > 0
        if not own:
            assert f"modelled from the {workload} operator profile" in e["explanation"]
            assert "modelled" in [w["code"] for w in e["why"]]  # after power_capped, for a GPU capped to the budget
            f = next(w["figures"] for w in e["why"] if w["code"] == "modelled")
            assert f["compute_ms"] + f["memory_ms"] <= f["step_ms"] * (1 + 1e-9)  # the parts fit in the step
    # the H100's run measured batch 32 (its second machine): its figure, capped to the budget, states what
    # the config holds as a modelled one does (above)
    h100 = next(c["estimate"] for c in gpus if c["hardware"]["catalog_id"] == "h100-sxm5-80gb")
    assert h100["source"] == REFERENCES[0] and "measured by hwadvisor's own reference run" in h100["explanation"]
    # a bigger GPU is faster at a large batch: an A100 beats a T4 at its best
    best = {
        cid: max(c["estimate"]["throughput_samples_per_s"] for c in gpus if c["hardware"]["catalog_id"] == cid)
        for cid in ("t4", "a100-pcie-40gb")
    }
    assert best["a100-pcie-40gb"] > 3 * best["t4"]
    assert "best 1000" not in " ".join(answer["notes"])  # the whole list: none cut


@pytest.mark.parametrize("workload", ["resnet50", "bert_base"])
def test_which_gpu_is_asked_with_device_kinds_and_answers_only_gpus(api: Api, workload: str) -> None:
    """'Which GPU for ResNet-50 inference under 300 W?' as a user asks it: no runtime or precision named,
    only the kind of device. Without the filter the lab's own CPU and the published Xeons come first;
    with it every candidate and every rejection is a GPU, ranked as they were among the CPUs."""
    cpu_only_lab(api)
    body = {
        "workload": workload,
        "task": "infer",
        "scope": "catalog",
        "batch_size": 32,
        "constraints": {"power_budget_w": BUDGET_W},
        "limit": 1000,
    }
    headers = api.bearer(api.token("readonly"))

    def answer(constraints: dict[str, Any]) -> dict[str, Any]:
        asked = {**body, "constraints": {**body["constraints"], **constraints}}
        response = api.client.post("/api/v1/recommendations", json=asked, headers=headers)
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    everything, gpus = answer({}), answer({"device_kinds": ["cuda"]})
    assert {c["hardware"]["kind"] for c in everything["candidates"]} == {"cpu", "cuda"}
    assert gpus["candidates"] and all(c["hardware"]["kind"] == "cuda" for c in gpus["candidates"])
    assert all(r["hardware"]["kind"] == "cuda" for r in gpus["rejected"])
    rows = [(c["hardware"]["name"], c["runtime"], c["precision"], c["batch_size"]) for c in gpus["candidates"]]
    before = [
        (c["hardware"]["name"], c["runtime"], c["precision"], c["batch_size"])
        for c in everything["candidates"]
        if c["hardware"]["kind"] == "cuda"
    ]
    assert before and rows[: len(before)] == before  # the same GPUs in the same order, more of them listed
    assert {c["hardware"]["catalog_id"] for c in gpus["candidates"]} >= GPUS_UNDER_BUDGET
    cpus = answer({"device_kinds": ["cpu"]})
    assert cpus["candidates"] and all(c["hardware"]["kind"] == "cpu" for c in cpus["candidates"])
    # "gpu", the catalog's word and the question's, is read as the vocabulary's cuda and said back as it
    said = answer({"device_kinds": ["gpu"]})
    assert said["query"]["constraints"]["device_kinds"] == ["cuda"]
    assert [(c["hardware"]["name"], c["runtime"], c["precision"]) for c in said["candidates"]] == [
        (c["hardware"]["name"], c["runtime"], c["precision"]) for c in gpus["candidates"]
    ]
    refused = api.client.post(
        "/api/v1/recommendations", json={**body, "constraints": {"device_kinds": ["tpu"]}}, headers=headers
    )
    assert refused.status_code == 422 and "cuda" in refused.text  # the kinds there are, said back


@pytest.mark.parametrize(("workload", "task"), [("resnet50", "infer"), ("bert_base", "infer"), ("bert_base", "train")])
def test_no_calibrated_gpu_figure_is_above_its_matrix_roofline(api: Api, workload: str, task: str) -> None:
    """The model alone is never above its roofline (tests/perfmodel/test_shipped_properties.py); a figure a
    reference run calibrates is the model times that run's measured / modelled ratio, which could carry it
    past. Every catalog GPU's figure at every batch and precision stays under its matrix FLOPs at the peak."""
    cpu_only_lab(api)
    body = {"workload": workload, "task": task, "scope": "catalog", "limit": 1000}
    body["constraints"] = {"device_kinds": ["cuda"], "runtimes": ["torch-eager"]}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    calibrated = [c for c in response.json()["candidates"] if c["estimate"]["source"] in REFERENCES]
    assert len(calibrated) > 100
    for c in calibrated:
        part, precision = get(c["hardware"]["catalog_id"]), Precision(c["precision"])
        peak = getattr(part, f"peak_{precision.value}_tflops") * 1e12
        profile = profiles()[(workload, Task(task), precision)]
        matrix = sum(b.flops.at(c["batch_size"]) for b in profile.buckets if b.op_class in TENSOR_CLASSES)
        assert c["estimate"]["throughput_samples_per_s"] <= c["batch_size"] * peak / matrix, c["hardware"]["name"]


def test_the_terminal_names_ten_unpriced_parts_and_counts_the_rest(api: Api) -> None:
    """`hwadvisor recommend --catalog --limit 1000` lists hundreds of catalog GPUs, most with no price: the
    line that says which have none names the first ten and how many more, not a hundred names."""
    cpu_only_lab(api)
    body = {"workload": "bert_base", "task": "infer", "scope": "catalog", "batch_size": 32, "limit": 1000}
    body["constraints"] = {"power_budget_w": BUDGET_W, "device_kinds": ["cuda"]}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer = Recommendation.model_validate(response.json())
    unpriced = sorted({c.hardware.name for c in answer.candidates if c.price is None})
    assert len(unpriced) > NAMED  # what makes this test mean something
    (line,) = [line for line in render(answer).splitlines() if line.startswith("no price for ")]
    assert line.startswith(f"no price for {', '.join(unpriced[:NAMED])} and {len(unpriced) - NAMED} more: ")


def test_an_h100_prediction_is_answered_for_every_runtime_and_a_t4_says_why_not_bf16(api: Api) -> None:
    """The lab's CPU ran torch-eager; the H100 reference run measured this very config: its figure is
    measured (on another machine with the part, its machine band), not the model's calibrated guess of it,
    which has the same throughput and a wider band. NGC's stack nothing ran on an H100 is predicted."""
    cpu_only_lab(api)
    headers = api.bearer(api.token("readonly"))
    (run,) = [r for r in reference.shipped() if r.hardware_id == "h100-sxm5-80gb"]
    (measured_there,) = [
        e.result.throughput_samples_per_s
        for e in reference.settled_models(run)
        if (e.result.workload, e.result.task, e.result.runtime, e.result.precision, e.result.batch_size)
        == ("resnet50", Task.infer, "torch-eager", Precision.bf16, 256)
    ]
    for runtime, kind in (("torch-eager", "measured"), ("pytorch-ngc", "predicted")):
        body = {"catalog_id": "h100-sxm5-80gb", "workload": "resnet50", "task": "infer", "runtime": runtime}
        response = api.client.post(
            "/api/v1/predictions", json={**body, "precision": "bf16", "batch_size": 256}, headers=headers
        )
        assert response.status_code == 200, response.text
        assert response.json()["kind"] == kind
    assert response.json()["source"] != run.source  # NGC's figure is the published stack's, not the run's
    eager = api.client.post(
        "/api/v1/predictions",
        json={**body, "runtime": "torch-eager", "precision": "bf16", "batch_size": 256},
        headers=headers,
    ).json()
    assert eager["source"] == run.source and eager["throughput_samples_per_s"] == pytest.approx(measured_there)
    assert "measured by hwadvisor's own reference run" in eager["explanation"]
    # at a batch the run did not measure, it is the model's, calibrated by the run
    between = api.client.post(
        "/api/v1/predictions",
        json={**body, "runtime": "torch-eager", "precision": "bf16", "batch_size": 100},
        headers=headers,
    ).json()
    assert between["kind"] != "measured"
    body = {"catalog_id": "t4", "workload": "bert_base", "task": "train", "runtime": "torch-eager"}
    refused = api.client.post(
        "/api/v1/predictions", json={**body, "precision": "bf16", "batch_size": 8}, headers=headers
    )
    assert refused.status_code == 404 and "no bf16 peak for NVIDIA T4" in refused.json()["detail"]
    # the H100 has an int8 peak: what stops the model is eager PyTorch, and the answer says so
    body = {"catalog_id": "h100-sxm5-80gb", "workload": "resnet50", "task": "infer", "runtime": "torch-eager"}
    refused = api.client.post(
        "/api/v1/predictions", json={**body, "precision": "int8", "batch_size": 8}, headers=headers
    )
    assert refused.status_code == 404
    assert "cannot predict it: eager PyTorch runs no int8 model" in refused.json()["detail"]


def test_fp16_that_no_run_measured_is_calibrated_by_the_bf16_runs_with_the_twin_band(api: Api) -> None:
    cpu_only_lab(api)
    headers = api.bearer(api.token("readonly"))
    found = {}
    for precision in ("bf16", "fp16"):
        # the reference runs measured BERT-base inference in bf16; in fp16 no settled result
        body = {"catalog_id": "a100-sxm4-80gb", "workload": "bert_base", "task": "infer", "runtime": "torch-eager"}
        response = api.client.post(
            "/api/v1/predictions", json={**body, "precision": precision, "batch_size": 256}, headers=headers
        )
        assert response.status_code == 200, response.text
        found[precision] = response.json()
    fp16, bf16 = found["fp16"], found["bf16"]
    assert fp16["source"] in REFERENCES and fp16["source"] == bf16["source"]
    assert "at bf16 (nothing measured fp16: the same tensor units)" in fp16["explanation"]
    assert "nothing measured" not in bf16["explanation"]
    # the same tensor units at the same rate on an A100: the bf16 runs' figure, with the twin's wider band
    # (of the device's steps: BERT-base at batch 256 keeps an A100 busy)
    assert fp16["throughput_samples_per_s"] == pytest.approx(bf16["throughput_samples_per_s"], rel=0.05)
    assert fp16["error_pct"] >= as_pct(band_of(in_regime("gpu-twin", "device"))) > bf16["error_pct"]


def sixteen_bits(
    api: Api, headers: dict[str, str], part: str, workload: str, task: str, batches: tuple[int, ...]
) -> dict[tuple[str, int], dict[str, Any]]:
    """POST /api/v1/predictions for the part's eager workload in bf16 and fp16 at each batch."""
    found = {}
    body = {"catalog_id": part, "workload": workload, "task": task, "runtime": "torch-eager"}
    for precision in ("bf16", "fp16"):
        for batch in batches:
            response = api.client.post(
                "/api/v1/predictions", json={**body, "precision": precision, "batch_size": batch}, headers=headers
            )
            assert response.status_code == 200, response.text
            found[precision, batch] = response.json()
    return found


def test_fp16_measured_only_far_from_the_batch_is_calibrated_by_bf16_measured_near_it(api: Api) -> None:
    """The reference runs settled ResNet-50 inference in fp16 at batch 256 alone, and in bf16 from batch 1:
    at batch 1 the bf16 ratio speaks (the step is the host's there, whichever 16 bits), at 256 fp16's own."""
    headers = api.bearer(api.token("readonly"))
    found = sixteen_bits(api, headers, "h100-sxm5-80gb", "resnet50", "infer", (1, 256))
    small, large = found["fp16", 1], found["fp16", 256]
    assert "at bf16 (fp16 measured only farther from batch 1: the same tensor units)" in small["explanation"]
    assert small["throughput_samples_per_s"] == pytest.approx(found["bf16", 1]["throughput_samples_per_s"], rel=0.05)
    assert small["error_pct"] >= as_pct(band_of("gpu-twin"))
    assert "at bf16" not in large["explanation"] and large["source"] == "reference:hwadvisor-h200-sxm-141gb"
    # LSTM training: fp16 settled at 256 alone, bf16 from 32; both far from batch 1, the nearer speaks
    body = {"catalog_id": "h100-sxm5-80gb", "workload": "lstm", "task": "train", "runtime": "torch-eager"}
    lstm = api.client.post("/api/v1/predictions", json={**body, "precision": "fp16", "batch_size": 1}, headers=headers)
    assert lstm.status_code == 200, lstm.text
    assert "at bf16 (fp16 measured only farther from batch 1" in lstm.json()["explanation"]


def test_a_host_bound_16_bit_step_measured_as_far_in_both_is_calibrated_by_the_one_more_machines_measured(
    api: Api,
) -> None:
    """The H200's runs settled DistilBERT training in fp16 at batch 32 on one machine and in bf16 on four
    runs, which stood 1.61x apart there (machines, not precisions: the one machine measured both alike).
    At batch 1, host-bound, both as far: bf16's four runs calibrate fp16 too. At 1024, as far beyond both
    at 256 but where the device bounds the step and fp16's own kernels may differ from bf16's, each keeps
    its own."""
    found = sixteen_bits(api, api.bearer(api.token("readonly")), "h200-sxm-141gb", "distilbert", "train", (1, 1024))
    fp16, bf16 = found["fp16", 1], found["bf16", 1]
    assert "at bf16 (fp16 measured as far on fewer machines, and the host bounds this step" in fp16["explanation"]
    assert "at fp16" not in bf16["explanation"]
    assert fp16["throughput_samples_per_s"] == pytest.approx(bf16["throughput_samples_per_s"], rel=0.05)
    assert fp16["error_pct"] >= as_pct(band_of(in_regime("gpu-twin", "host")))
    assert found["fp16", 1024]["kind"] == found["bf16", 1024]["kind"] == "predicted"
    assert "at bf16" not in found["fp16", 1024]["explanation"]


def test_tf32_carried_from_another_part_is_no_slower_than_fp32_where_the_device_bounds_the_step(api: Api) -> None:
    """The H100 run measured AlexNet inference at batch 256 in TF32 at 0.43 of the model and in FP32 at
    0.81 (TF32 1.64x FP32 there); carried as they were to an A10 or RTX 4090, memory-bound, TF32 read
    0.54-0.78x FP32. A part's own measurements stand: the H100 measured ResNet-50 in TF32 at batch 1 below
    FP32 (the host's step), and says so."""
    headers = api.bearer(api.token("readonly"))

    def asked(part: str, workload: str, precision: str, batch: int) -> dict[str, Any]:
        body = {"catalog_id": part, "workload": workload, "task": "infer", "runtime": "torch-eager"}
        response = api.client.post(
            "/api/v1/predictions", json={**body, "precision": precision, "batch_size": batch}, headers=headers
        )
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    for part in ("a10", "rtx-4090"):
        tf32, fp32 = asked(part, "alexnet", "tf32", 256), asked(part, "alexnet", "fp32", 256)
        assert tf32["kind"] == fp32["kind"] == "predicted"
        assert tf32["throughput_samples_per_s"] >= fp32["throughput_samples_per_s"]
        assert "no slower than its fp32 figure" in tf32["explanation"]
        assert tf32["error_pct"] >= fp32["error_pct"]
    own_tf32, own_fp32 = asked("h100-sxm5-80gb", "resnet50", "tf32", 1), asked("h100-sxm5-80gb", "resnet50", "fp32", 1)
    assert own_tf32["throughput_samples_per_s"] < own_fp32["throughput_samples_per_s"]
    assert "no slower than" not in own_tf32["explanation"]


def test_a_part_whose_dram_outruns_its_sms_says_its_eager_kernels_stream_at_the_sms_rate(api: Api) -> None:
    headers = api.bearer(api.token("readonly"))
    found = {}
    for part in ("b200-sxm-180gb", "l40s"):
        body = {"catalog_id": part, "workload": "resnet50", "task": "infer", "runtime": "torch-eager"}
        response = api.client.post(
            "/api/v1/predictions", json={**body, "precision": "bf16", "batch_size": 256}, headers=headers
        )
        assert response.status_code == 200, response.text
        found[part] = response.json()
    # 8 TB/s of HBM3e over 148 SMs: the eager stream rate, not the DRAM, bounds the memory-bound kernels
    modelled = next(w for w in found["b200-sxm-180gb"]["why"] if w["code"] == "modelled")
    assert modelled["figures"]["streamed_ms"] >= 0.5 * modelled["figures"]["memory_ms"] > 0
    assert "at the SMs' eager stream rate, not the DRAM's" in found["b200-sxm-180gb"]["explanation"]
    # an L40S's GDDR6 feeds its SMs less than they could stream
    assert "eager stream rate" not in found["l40s"]["explanation"]


def test_a_config_that_does_not_fit_says_so(api: Api) -> None:
    body = {"catalog_id": "rtx-4090", "workload": "fcn_s", "task": "train", "runtime": "torch-eager"}
    response = api.client.post(
        "/api/v1/predictions",
        json={**body, "precision": "fp32", "batch_size": 100_000},
        headers=api.bearer(api.token("readonly")),
    )
    assert response.status_code == 200, response.text
    estimate = response.json()
    assert estimate["memory_gb"] > 24
    assert estimate["why"][-1]["code"] == "out_of_memory"
    assert "has 24 GB" in estimate["explanation"]


def h100_bert_at_256(api: Api, task: str) -> dict[str, dict[str, Any]]:
    """The H100's BERT-base figures at batch 256 in bf16 and fp16, eager PyTorch, from the API."""
    body = {"catalog_id": "h100-sxm5-80gb", "workload": "bert_base", "task": task, "runtime": "torch-eager"}
    found = {}
    for precision in ("bf16", "fp16"):
        response = api.client.post(
            "/api/v1/predictions",
            json={**body, "precision": precision, "batch_size": 256},
            headers=api.bearer(api.token("readonly")),
        )
        assert response.status_code == 200, response.text
        found[precision] = response.json()
    return found


def h100_bert_capped(api: Api, task: str, budget_w: float) -> dict[str, dict[str, Any]]:
    """The same two figures as the recommender ranks them under a power budget."""
    ask: dict[str, Any] = {"workload": "bert_base", "task": task, "scope": "catalog", "batch_size": 256, "limit": 1000}
    ask["constraints"] = {"power_budget_w": budget_w, "runtimes": ["torch-eager"], "precisions": ["fp16", "bf16"]}
    answer = api.client.post("/api/v1/recommendations", json=ask, headers=api.bearer(api.token("readonly"))).json()
    return {
        c["precision"]: c["estimate"] for c in answer["candidates"] if c["hardware"]["catalog_id"] == "h100-sxm5-80gb"
    }


def test_a_twin_precisions_figure_draws_what_its_twin_read(api: Api) -> None:
    """The H100 run measured BERT-base's bf16 inference at batch 256 (its power from NVML), not fp16: the
    fp16 figure is the model's calibrated by the bf16 measurement. Its power is what the part read running
    bf16 there (the same tensor units doing the same work), not the power model's figure, which errs
    by its band: so a budget caps the two alike."""
    cpu_only_lab(api)
    found = h100_bert_at_256(api, "infer")
    assert (found["bf16"]["kind"], found["bf16"]["power_basis"]) == ("measured", "measured")
    assert (found["fp16"]["kind"], found["fp16"]["power_basis"]) == ("predicted", "transferred")
    assert found["fp16"]["throughput_samples_per_s"] == pytest.approx(found["bf16"]["throughput_samples_per_s"])
    assert found["fp16"]["power_w"] == pytest.approx(found["bf16"]["power_w"], rel=0.05)
    (read,) = [w for w in found["fp16"]["why"] if w["code"] == "power_twin"]
    assert "running bf16 at this batch" in read["text"] and "the figure is calibrated by it" in read["text"]
    capped = h100_bert_capped(api, "infer", 300)
    assert capped["fp16"]["power_basis"] == capped["bf16"]["power_basis"] == "capped"
    assert capped["fp16"]["throughput_samples_per_s"] == pytest.approx(
        capped["bf16"]["throughput_samples_per_s"], rel=0.03
    ), "the same units under the same cap"


def test_a_parts_twin_reading_is_its_power_whatever_calibrates_the_figure(api: Api) -> None:
    """The H100 run measured BERT-base's bf16 training at batch 256 (NVML: about 690 W), not fp16; the H200
    run measured fp16 there, which calibrates the H100's fp16 figure. The power is still what this part
    read running bf16, not the power model's (about 500 W): under a 400 W budget the two were capped
    unalike (x0.92 and x0.82) and fp16 ranked 14% above bf16 on the same tensor units."""
    cpu_only_lab(api)
    found = h100_bert_at_256(api, "train")
    assert (found["bf16"]["kind"], found["bf16"]["power_basis"]) == ("measured", "measured")
    assert found["fp16"]["source"] == "reference:hwadvisor-h200-sxm-141gb"  # not calibrated by its twin
    assert found["fp16"]["power_basis"] == "transferred"
    assert found["fp16"]["power_w"] == pytest.approx(found["bf16"]["power_w"], rel=0.05)
    (read,) = [w for w in found["fp16"]["why"] if w["code"] == "power_twin"]
    assert "running bf16 at this batch" in read["text"] and "calibrated by it" not in read["text"]
    capped = h100_bert_capped(api, "train", 400)
    assert capped["fp16"]["throughput_samples_per_s"] == pytest.approx(
        capped["bf16"]["throughput_samples_per_s"], rel=0.05
    ), "the same units under the same cap"


def test_a_graph_runtime_on_a_gpu_no_lab_device_measured_says_nothing_checked_it(api: Api) -> None:
    cpu_only_lab(api)
    headers = api.bearer(api.token("readonly"))
    found = {}
    for runtime in ("onnxruntime-cuda", "torch-compile", "torch-eager"):
        body = {"catalog_id": "a100-sxm4-80gb", "workload": "resnet50", "task": "infer", "runtime": runtime}
        response = api.client.post(
            "/api/v1/predictions", json={**body, "precision": "fp16", "batch_size": 64}, headers=headers
        )
        assert response.status_code == 200, response.text
        found[runtime] = response.json()
    for runtime in ("onnxruntime-cuda", "torch-compile"):
        floor = [w for w in found[runtime]["why"] if w["code"] == "graph_uncalibrated"]
        assert floor and "no measurement checks the model's fusion" in floor[0]["text"], found[runtime]["why"]
        assert "ran {}-{}x faster".format(*GRAPH_GPU_GAP) in floor[0]["text"], "the gap as the note gives it"
        assert found[runtime]["throughput_samples_per_s"] > found["torch-eager"]["throughput_samples_per_s"]
    assert "graph_uncalibrated" not in [w["code"] for w in found["torch-eager"]["why"]]


def test_a_published_stacks_step_and_its_parts_are_scaled_alike(api: Api) -> None:
    cpu_only_lab(api)
    body = {
        "workload": "resnet50",
        "task": "infer",
        "scope": "catalog",
        "constraints": {"runtimes": ["openvino"], "precisions": ["fp32"]},
        "limit": 50,
    }
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    modelled = [
        next(w["figures"] for w in c["estimate"]["why"] if w["code"] == "modelled")
        for c in response.json()["candidates"]
        if "modelled" in [w["code"] for w in c["estimate"]["why"]]
    ]
    assert modelled and all(f["factor"] != 1 for f in modelled)  # OpenVINO's stack factor
    for f in modelled:
        assert f["compute_ms"] + f["memory_ms"] <= f["step_ms"] * (1 + 1e-9)


def test_a_language_models_step_no_lab_device_measured_is_calibrated_as_the_serving_planners(api: Api) -> None:
    """The recommender's llama3_1b decode and prefill on an H100 and on a Xeon (nothing in this lab ran a
    language model) take the shipped calibration the serving planner's steps take, so the two answers
    agree (the recommender times the recorded profile, the planner the written-down one: within 10%); an
    MI300X, whose stack nothing measured, keeps the model alone and says so."""
    cpu_only_lab(api)
    headers = api.bearer(api.token("readonly"))
    preset = LLM_PRESETS["llama3_1b"].shape
    for part, precision, task, batch in (
        ("h100-sxm5-80gb", Precision.bf16, Task.decode, 1),
        ("h100-sxm5-80gb", Precision.bf16, Task.decode, 16),
        ("h100-sxm5-80gb", Precision.bf16, Task.prefill, 1),
        ("xeon-platinum-8480plus", Precision.fp32, Task.decode, 1),
        ("epyc-9654", Precision.fp32, Task.decode, 1),  # its one-row products on one thread, in both
        ("epyc-9654", Precision.fp32, Task.decode, 4),  # four rows: on 12 of its 96 cores (MKL's grid)
        ("mi300x", Precision.bf16, Task.decode, 1),
    ):
        body = {
            "catalog_id": part,
            "workload": "llama3_1b",
            "task": task.value,
            "precision": precision.value,
            "batch_size": batch,
            "runtime": "torch-eager",
        }
        response = api.client.post("/api/v1/predictions", json=body, headers=headers)
        assert response.status_code == 200, response.text
        answer = response.json()
        planned = generation.step(preset, task, precision, batch, 512, get(part))
        assert planned is not None
        assert answer["latency_p99_ms"] == pytest.approx(planned.seconds * 1000, rel=0.1), part
        calibrated = "calibrated by hwadvisor's own prefill and decode runs" in answer["explanation"]
        assert calibrated == (planned.factor != 1.0), part
        assert calibrated == (part != "mi300x")
        fewer = planned.product_threads
        assert ("weight products on one core" in answer["explanation"]) == (fewer == 1)
        assert (f"weight products on {fewer} cores" in answer["explanation"]) == (fewer is not None and fewer > 1)
        assert (fewer == {1: 1, 4: 12}[batch]) if part == "epyc-9654" else (fewer is None)
        if calibrated:  # the planner's band: the calibration's, no narrower than the machine band
            assert answer["error_pct"] == pytest.approx(as_pct(planned.band))


def test_a_zoo_workloads_few_row_linear_layers_on_an_epyc_say_the_cores_they_run_on(api: Api) -> None:
    """AlexNet's classifier takes one row per sample: at batch 1 MKL runs it on one of an EPYC 9654's 96
    cores, at batch 4 on 12, at batch 64 on all of them; a Xeon's MKL and ONNX Runtime use every core
    (app/perfmodel/model.py ``few_row_shares``)."""
    cpu_only_lab(api)
    headers = api.bearer(api.token("readonly"))
    said = {}
    for part, runtime, batch in (
        ("epyc-9654", "torch-eager", 1),
        ("epyc-9654", "torch-eager", 4),
        ("epyc-9654", "torch-eager", 64),
        ("epyc-9654", "onnxruntime-cpu", 1),
        ("xeon-platinum-8480plus", "torch-eager", 1),
    ):
        body = {
            "catalog_id": part,
            "workload": "alexnet",
            "task": "infer",
            "precision": "fp32",
            "batch_size": batch,
            "runtime": runtime,
        }
        response = api.client.post("/api/v1/predictions", json=body, headers=headers)
        assert response.status_code == 200, response.text
        said[(part, runtime, batch)] = response.json()
    on = {key: answer["explanation"] for key, answer in said.items()}
    assert "weight products on one core" in on[("epyc-9654", "torch-eager", 1)]
    assert "weight products on 12 cores" in on[("epyc-9654", "torch-eager", 4)]
    for key in (("epyc-9654", "torch-eager", 64), ("epyc-9654", "onnxruntime-cpu", 1)):
        assert "weight products on" not in on[key], key
    assert "weight products on" not in on[("xeon-platinum-8480plus", "torch-eager", 1)]
    # one core reads the classifier's 234 MB: batch 4 is more than 4x batch 1's samples/s
    one, four = (said[("epyc-9654", "torch-eager", b)]["throughput_samples_per_s"] for b in (1, 4))
    assert four > 4 * one


def test_eager_gpus_beside_graph_runtime_cpus_are_said_to_be_no_like_for_like_comparison(api: Api) -> None:
    cpu_only_lab(api)
    body: dict[str, Any] = {"workload": "resnet50", "task": "infer", "scope": "catalog", "limit": 5}
    body["constraints"] = {"power_budget_w": BUDGET_W}
    reader = api.bearer(api.token("readonly"))
    free = api.client.post("/api/v1/recommendations", json=body, headers=reader).json()
    said = [n for n in free["notes"] if n.startswith("every GPU figure here is eager PyTorch")]
    # OpenVINO's published CPU rows run the fused graph; every GPU row is eager PyTorch, listed or not
    assert len(said) == 1 and said[0].endswith("(the CPU rows of openvino are a graph runtime's already)"), free[
        "notes"
    ]
    assert "runs were {}-{}x it".format(*GRAPH_GPU_GAP) in said[0], "the gap as the graph runtime's reason gives it"
    chosen = {**body, "constraints": {"power_budget_w": BUDGET_W, "runtimes": ["torch-eager", "openvino"]}}
    asked = api.client.post("/api/v1/recommendations", json=chosen, headers=reader).json()
    assert not [n for n in asked["notes"] if "eager PyTorch" in n], "an ask that chose its runtimes got what it chose"
    training = api.client.post("/api/v1/recommendations", json={**body, "task": "train"}, headers=reader).json()
    assert not [n for n in training["notes"] if "every GPU figure" in n], "training is eager PyTorch's to compare"


def test_no_such_note_once_a_graph_runtime_ran_on_a_gpu(api: Api) -> None:
    spec = gpu_machine("l4", "node-l4")
    _machine_id, token = api.enroll(spec)
    ran = [measured(64, 2400, 70, runtime="onnxruntime-cuda", precision="fp16")]
    assert api.post_run(token, run_report(spec, results=ran)).status_code == 201
    body = {"workload": "resnet50", "task": "infer", "scope": "catalog", "limit": 5}
    answer = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly"))).json()
    assert any(c["runtime"] == "onnxruntime-cuda" for c in answer["candidates"]), answer["candidates"]
    assert not [n for n in answer["notes"] if "every GPU figure" in n], answer["notes"]


def test_tf32_is_not_modelled_on_cpus_so_the_unanswered_count_holds_only_gpus_without_its_peak(api: Api) -> None:
    """tf32 is a tensor-core format of NVIDIA GPUs: a CPU is never a tf32 candidate, and the note counting
    what nothing could estimate counts, for tf32, the catalog GPUs that have no tf32 peak (Volta, Turing)."""
    cpu_only_lab(api)
    body = {"workload": "resnet50", "task": "infer", "scope": "catalog", "batch_size": 32, "limit": 1000}
    body["constraints"] = {"precisions": ["tf32"], "runtimes": ["torch-eager"]}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert all(c["hardware"]["kind"] == "cuda" for c in answer["candidates"] + answer["rejected"])
    without = [e for e in catalog_entries() if e.kind == "gpu" and e.peak_tf32_tflops is None]
    assert without and any(e.peak_tf32_tflops is not None for e in catalog_entries() if e.kind == "gpu")
    (note,) = [n for n in answer["notes"] if "had no measurement and nothing to predict them from" in n]
    assert note.startswith(f"{len(without)} hardware x config pairs")  # one batch: one pair per such GPU
