"""Model variants in the recommender: offered only when the ask allows them, each with what it is,
its speed relative to the original model on the same hardware, and the speed-only caveat."""

from __future__ import annotations

from typing import Any

from testkit.factories import Api, run_report
from testkit.lab import cpu_machine, measured
from tests.recommender.test_recommend import ask

CAVEAT = "speed only; check accuracy on your data"


def lab_with_variants(api: Api) -> None:
    """One CPU: resnet50 at batch 8 in fp32 eager (10/s), ONNX Runtime (20/s), and two variants."""
    spec = cpu_machine("node-cpu")
    _machine_id, token = api.enroll(spec)
    on_cpu = {"device": "cpu", "threads": 4, "power_source": "rapl"}
    results = [
        measured(8, 10, 100, runtime="torch-eager", precision="fp32", **on_cpu),
        measured(8, 20, 100, runtime="onnxruntime-cpu", precision="fp32", **on_cpu),
        measured(8, 31, 100, runtime="openvino", precision="int8", variant="int8-static", **on_cpu),
        measured(8, 25, 100, runtime="onnxruntime-cpu", precision="fp32", variant="pruned-50", **on_cpu),
    ]
    assert api.post_run(token, run_report(spec, results=results)).status_code == 201


def configs(answer: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(c["runtime"], c["precision"], c["variant"]) for c in answer["candidates"]]


def test_variants_are_left_out_unless_the_ask_allows_them_and_it_is_told_so(api: Api) -> None:
    lab_with_variants(api)
    answer = ask(api, batch_size=8)
    assert configs(answer) == [("onnxruntime-cpu", "fp32", None), ("torch-eager", "fp32", None)]
    assert all(c["caveat"] is None for c in answer["candidates"])
    assert any("int8-static, pruned-50" in n and "allow_variants" in n for n in answer["notes"])


def test_an_allowed_variant_says_what_it_is_relative_to_the_original_with_its_caveat(api: Api) -> None:
    lab_with_variants(api)
    answer = ask(api, batch_size=8, allow_variants=True)
    assert configs(answer) == [
        ("openvino", "int8", "int8-static"),
        ("onnxruntime-cpu", "fp32", "pruned-50"),
        ("onnxruntime-cpu", "fp32", None),
        ("torch-eager", "fp32", None),
    ]
    static, pruned = answer["candidates"][:2]
    assert static["caveat"] == pruned["caveat"] == CAVEAT
    first = static["estimate"]["why"][0]
    assert first["code"] == "variant" and first["figures"]["ratio"] == 3.1
    assert static["estimate"]["explanation"].startswith("resnet50 int8-static (static post-training int8")
    assert "on openvino int8: 3.1x the fp32 torch-eager throughput of the original resnet50" in first["text"]
    assert first["text"].endswith(f"(measured); {CAVEAT}")
    assert "2.5x the fp32 torch-eager throughput" in pruned["estimate"]["explanation"]
    assert any("none is the original model's equal" in n for n in answer["notes"])


def test_the_ask_may_name_the_variants_it_allows(api: Api) -> None:
    lab_with_variants(api)
    answer = ask(api, batch_size=8, allow_variants=True, constraints={"variants": ["pruned-50"]})
    assert [c["variant"] for c in answer["candidates"]] == ["pruned-50", None, None]


def test_results_are_filtered_by_variant_and_none_is_the_original(api: Api) -> None:
    lab_with_variants(api)

    def listed(variant: str) -> list[str | None]:
        page = api.client.get(f"/api/v1/results?variant={variant}", headers=api.admin).json()
        return sorted((r["variant"] or "") for r in page["items"])

    assert listed("none") == ["", ""]
    assert listed("pruned-50") == ["pruned-50"]


def test_a_prediction_of_a_variant_reads_that_variants_results_only(api: Api) -> None:
    lab_with_variants(api)
    machine = api.client.get("/api/v1/machines", headers=api.admin).json()["items"][0]["id"]
    ask_for = {"machine_id": machine, "device": "cpu", "workload": "resnet50", "runtime": "onnxruntime-cpu"}
    ask_for |= {"precision": "fp32", "batch_size": 8, "threads": 4}
    pruned = api.client.post("/api/v1/predictions", json={**ask_for, "variant": "pruned-50"}, headers=api.admin)
    original = api.client.post("/api/v1/predictions", json=ask_for, headers=api.admin)
    assert pruned.json()["throughput_samples_per_s"] == 25 and original.json()["throughput_samples_per_s"] == 20
    missing = api.client.post("/api/v1/predictions", json={**ask_for, "variant": "lowrank-25"}, headers=api.admin)
    assert missing.status_code == 404 and "a variant is never modelled" in missing.json()["detail"]
