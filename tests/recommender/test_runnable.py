"""An ask is answered for what can run: a runtime that does not run the task, or not on that kind of device,
or that nobody ever named, and a zoo workload asked for a task it has not, are refused with what to ask
instead, not given a figure; a custom workload is modelled as the runtime asked dispatches it; a precision
no profile models names the ones that are."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import Response

from testkit.factories import Api, run_report
from testkit.lab import cpu_machine, measured
from tests.recommender.test_cpu_only_lab import cpu_only_lab


def predict(api: Api, catalog_id: str, runtime: str, task: str = "infer", **asked: Any) -> Response:
    body = {"catalog_id": catalog_id, "runtime": runtime, "task": task, "precision": "fp32", "batch_size": 8}
    if "custom" not in asked:
        body["workload"] = "bert_base"
    return api.client.post("/api/v1/predictions", json={**body, **asked}, headers=api.bearer(api.token("readonly")))


@pytest.mark.parametrize(
    ("catalog_id", "runtime", "task", "said", "instead"),
    [
        ("epyc-9654", "openvino", "train", "openvino runs infer, not train", "torch-eager"),
        ("h100-sxm5-80gb", "tensorrt", "train", "tensorrt runs infer, not train", "torch-eager"),
        ("h100-sxm5-80gb", "openvino", "infer", "openvino runs on cpu devices only, not cuda: NVIDIA H100", "tensorrt"),
        ("epyc-9654", "onnxruntime-cuda", "infer", "onnxruntime-cuda runs on cuda devices only", "onnxruntime-cpu"),
    ],
)
def test_a_runtime_that_cannot_run_the_ask_is_refused_with_the_runtimes_that_can(
    api: Api, catalog_id: str, runtime: str, task: str, said: str, instead: str
) -> None:
    cpu_only_lab(api)
    refused = predict(api, catalog_id, runtime, task)
    assert refused.status_code == 422, refused.text
    assert said in refused.json()["detail"] and instead in refused.json()["detail"]
    # the same part with a runtime that runs the ask is answered
    assert predict(api, catalog_id, "torch-eager", task).status_code == 200


def test_a_runtime_nobody_named_is_not_found_and_a_published_stacks_name_is_asked_as_before(api: Api) -> None:
    cpu_only_lab(api)
    refused = predict(api, "h100-sxm5-80gb", "torch-eagre")
    assert refused.status_code == 404, refused.text
    assert "no runtime is named 'torch-eagre'" in refused.json()["detail"]
    assert "torch-eager" in refused.json()["detail"]  # the names there are
    # Lambda's NGC stack is no plug-in, but the published rows name it: the estimators answer for it
    assert predict(api, "h100-sxm5-80gb", "pytorch-ngc", "train").status_code == 200


def test_a_custom_workload_is_refused_a_runtime_of_another_kind_of_device(api: Api) -> None:
    custom = {"name": "mine", "flops_per_sample": 4e9, "bytes_per_sample": 1e8, "parameters": 25_000_000}
    refused = predict(api, "h100-sxm5-80gb", "onnxruntime-cpu", custom=custom)
    assert refused.status_code == 422 and "onnxruntime-cpu runs on cpu devices only" in refused.json()["detail"]
    assert predict(api, "h100-sxm5-80gb", "torch-eager", custom=custom).status_code == 200


def test_a_recommendations_runtime_filter_says_which_runtime_can_have_no_candidate(api: Api) -> None:
    cpu_only_lab(api)
    body = {"workload": "bert_base", "task": "train", "scope": "catalog"}
    body["constraints"] = {"runtimes": ["openvino", "torch-eagre", "torch-eager"], "device_kinds": ["cuda"]}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["candidates"] and {c["runtime"] for c in answer["candidates"]} == {"torch-eager"}
    (openvino,) = [n for n in answer["notes"] if n.startswith("openvino ")]
    assert "openvino runs infer, not train, so it has no candidate" in openvino
    assert "runtimes that run train on a cuda device: torch-compile, torch-eager" in openvino
    assert any(n.startswith("no runtime is named 'torch-eagre'") for n in answer["notes"])
    assert not any(n.startswith("torch-eager") for n in answer["notes"])


def test_a_zoo_workload_asked_for_a_task_it_has_not_is_refused_with_its_tasks(api: Api) -> None:
    cpu_only_lab(api)
    refused = predict(api, "h100-sxm5-80gb", "torch-eager", "decode", precision="bf16")
    assert refused.status_code == 422, refused.text
    assert "bert_base has tasks infer, train, not decode" in refused.json()["detail"]
    body = {"workload": "resnet50", "task": "prefill", "scope": "catalog"}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 422 and "resnet50 has tasks infer, train, not prefill" in response.json()["detail"]
    # a language model's decode is asked as before
    asked = {"workload": "llama3_1b", "precision": "bf16", "batch_size": 1}
    assert predict(api, "h100-sxm5-80gb", "torch-eager", "decode", **asked).status_code == 200


def test_a_custom_workloads_prediction_is_modelled_as_the_asked_runtime_dispatches_it(api: Api) -> None:
    """A graph runtime pays no Python per operator: at batch 1 a small model of many operators is faster in
    ONNX Runtime than in eager PyTorch on the same CPU, and the answer names the runtime it modelled."""
    custom = {"name": "mine", "flops_per_sample": 2e8, "bytes_per_sample": 4e6, "parameters": 1_000_000}
    custom["operators"] = 400
    found = {}
    for runtime in ("torch-eager", "onnxruntime-cpu"):
        response = predict(api, "epyc-9654", runtime, custom=custom, batch_size=1)
        assert response.status_code == 200, response.text
        found[runtime] = response.json()
        assert f"modelled from specs only for {runtime}:" in found[runtime]["explanation"]
    eager, graph = found["torch-eager"], found["onnxruntime-cpu"]
    assert graph["throughput_samples_per_s"] > 1.5 * eager["throughput_samples_per_s"]
    # on a GPU, a graph runtime's figure says what MLPerf's TensorRT runs made of such figures
    tensorrt = predict(api, "h100-sxm5-80gb", "tensorrt", custom=custom, precision="fp16").json()
    assert "graph_uncalibrated" in [w["code"] for w in tensorrt["why"]]
    eager = predict(api, "h100-sxm5-80gb", "torch-eager", custom=custom, precision="fp16").json()
    assert "graph_uncalibrated" not in [w["code"] for w in eager["why"]]


def test_a_custom_workloads_rows_are_eager_pytorchs_and_a_filter_without_it_says_so(api: Api) -> None:
    custom = {"name": "mine", "flops_per_sample": 2e9, "bytes_per_sample": 4e7, "parameters": 10_000_000}
    found = {}
    for runtime in ("torch-eager", "onnxruntime-cpu"):
        body = {"custom": custom, "scope": "catalog", "constraints": {"runtimes": [runtime]}, "limit": 5}
        response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
        assert response.status_code == 200, response.text
        found[runtime] = response.json()
    assert found["torch-eager"]["candidates"]
    assert {c["runtime"] for c in found["torch-eager"]["candidates"]} == {"torch-eager"}
    assert found["onnxruntime-cpu"]["candidates"] == []
    assert any("rows are modelled as torch-eager" in n for n in found["onnxruntime-cpu"]["notes"])


def test_a_precision_no_profile_models_names_the_precisions_that_are(api: Api) -> None:
    refused = predict(api, "h100-sxm5-80gb", "torch-eager", precision="int4")
    assert refused.status_code == 404, refused.text
    detail = refused.json()["detail"]
    assert "no int4 profile of bert_base/infer: its profiles are at fp32, " in detail
    assert "build_profiles" not in detail  # no profile build makes a weight-only int4 of BERT


def test_a_lab_cpus_prediction_without_threads_is_at_the_most_threads_it_measured(api: Api) -> None:
    """The quick suite runs a model at all of a CPU's cores; asked without threads, the machine's own
    measurement answers, and says at how many threads, where 'nothing measured' was answered before."""
    spec = cpu_machine("node-cpu")
    machine_id, token = api.enroll(spec)
    results = [
        measured(8, 25, 110, device="cpu", runtime="torch-eager", precision="fp32", threads=t, power_source="rapl")
        for t in (4, 16)
    ]
    assert api.post_run(token, run_report(spec, results=results)).status_code == 201
    body = {"machine_id": str(machine_id), "device": "cpu", "workload": "resnet50", "task": "infer"}
    body |= {"runtime": "torch-eager", "precision": "fp32", "batch_size": 8}
    headers = api.bearer(api.token("readonly"))
    found = {}
    for threads in (None, 4):
        response = api.client.post("/api/v1/predictions", json={**body, "threads": threads}, headers=headers)
        assert response.status_code == 200, response.text
        found[threads] = response.json()
        assert found[threads]["kind"] == "measured"
    assert "at 16 threads:" in found[None]["explanation"] and "at 4 threads:" in found[4]["explanation"]
