"""Published results: shipped, imported by CSV through the API and the CLI, always under their own source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.catalog.published import shipped
from testkit.factories import Api

CSV = """hardware_id,hardware_name,workload,runtime,precision,batch_size,devices,throughput_samples_per_s,mean_power_w
l40s,Vendor X L40S box,resnet50/infer,tensorrt,int8,64,2,24000,640
h100-sxm5-80gb,Vendor X H100 box,resnet50/infer,tensorrt,int8,64,1,31000,
"""


def test_the_shipped_results_cover_the_lambda_gpus_and_openvino_cpus() -> None:
    rows = shipped()
    lambda_gpus = {r.hardware_id for r in rows if r.source == "public:lambda-2024"}
    assert len(lambda_gpus) == 12
    h100 = [
        r
        for r in rows
        if r.hardware_id == "h100-sxm5-80gb" and (r.workload, r.task) == ("resnet50", "train") and r.precision == "fp16"
    ]
    assert sorted(r.throughput_samples_per_s for r in h100) == [2616, 2776, 2785, 2787, 2790, 2791]
    # Lambda's fp32 column ran TF32 on Ampere and newer
    a100 = {
        r.precision for r in rows if r.hardware_id == "a100-sxm4-80gb" and (r.workload, r.task) == ("resnet50", "train")
    }
    assert a100 == {"tf32", "fp16"}
    cpus = {r.hardware_id for r in rows if r.source == "public:openvino-2024.1"}
    # every Xeon OpenVINO published that the catalog carries (its Silver 4216R has no dataset row)
    assert cpus == {
        "xeon-gold-5218t",
        "xeon-platinum-8270",
        "xeon-platinum-8380",
        "xeon-platinum-8490h",
        "xeon-platinum-8580",
        "xeon-silver-4316",
    }


def test_an_imported_csv_is_its_own_source_in_answers(api: Api) -> None:
    response = api.client.post(
        "/api/v1/public-results?source=public:vendor-x",
        content=CSV,
        headers={**api.admin, "content-type": "text/csv"},
    )
    assert response.status_code == 201, response.text
    assert response.json() == {"imported": 2, "source": "public:vendor-x"}
    listed = api.client.get("/api/v1/public-results?source=public:vendor-x", headers=api.admin).json()
    assert len(listed) == 2
    body = {
        "workload": "resnet50",
        "scope": "catalog",
        "constraints": {"runtimes": ["tensorrt"], "power_budget_w": 400},
    }
    answer = api.client.post("/api/v1/recommendations", json=body, headers=api.admin).json()
    l40s = next(c for c in answer["candidates"] if c["hardware"]["catalog_id"] == "l40s")
    assert l40s["estimate"]["source"] == "public:vendor-x" and l40s["estimate"]["kind"] == "measured"
    assert l40s["estimate"]["throughput_samples_per_s"] == 12000  # per device: two L40S in that box
    assert l40s["estimate"]["power_w"] == 320 and l40s["estimate"]["power_basis"] == "measured"
    assert api.client.delete("/api/v1/public-results?source=public:vendor-x", headers=api.admin).status_code == 204
    assert api.client.get("/api/v1/public-results?source=public:vendor-x", headers=api.admin).json() == []


def test_one_bad_row_rejects_the_file_and_names_its_line(api: Api) -> None:
    bad = CSV.replace("31000", "-5")
    response = api.client.post(
        "/api/v1/public-results?source=public:vendor-x", content=bad, headers={**api.admin, "content-type": "text/csv"}
    )
    assert response.status_code == 422
    assert "line 3: throughput_samples_per_s" in response.json()["detail"]
    assert api.client.get("/api/v1/public-results?source=public:vendor-x", headers=api.admin).json() == []
    unknown = api.client.post(
        "/api/v1/public-results", content="colour\nred\n", headers={**api.admin, "content-type": "text/csv"}
    )
    assert unknown.status_code == 422 and "unknown CSV columns: colour" in unknown.json()["detail"]


def test_the_cli_imports_and_recommends(tmp_path: Path) -> None:
    env = {**os.environ, "HWADVISOR_DATA_DIR": str(tmp_path)}
    env.pop("HWADVISOR_DATABASE_URL", None)
    csv_path = tmp_path / "vendor.csv"
    csv_path.write_text(CSV)
    hwadvisor = [str(Path(sys.executable).parent / "hwadvisor")]
    imported = subprocess.run(
        [*hwadvisor, "import", str(csv_path), "--source", "public:vendor-x"], env=env, capture_output=True, text=True
    )
    assert imported.returncode == 0, imported.stderr
    assert "imported 2 results" in imported.stdout
    table = subprocess.run(
        [*hwadvisor, "recommend", "resnet50", "--catalog", "--power-budget", "300", "--runtime", "tensorrt"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert table.returncode == 0, table.stderr
    assert "public:vendor-x" in table.stdout and "rejected" in table.stdout
    as_json = subprocess.run(
        [*hwadvisor, "recommend", "resnet50", "--task", "train", "--catalog", "--precision", "fp16", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert as_json.returncode == 0, as_json.stderr
    answer = json.loads(as_json.stdout)
    assert "public:lambda-2024" in {c["estimate"]["source"] for c in answer["candidates"]}
