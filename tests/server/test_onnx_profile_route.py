"""POST /api/v1/workloads/onnx-profile: an uploaded ONNX file becomes a custom workload the
recommender takes; oversize, garbage and unauthenticated uploads are refused."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator

import pytest
import torch
from fastapi.testclient import TestClient
from torch import nn

from app.config import Settings
from app.db.engine import Database
from app.server.app import create_app
from testkit.factories import Api

URL = "/api/v1/workloads/onnx-profile"
OCTETS = {"Content-Type": "application/octet-stream"}


def _onnx() -> bytes:
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)).eval()
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (torch.randn(1, 3, 8, 8),), buffer, input_names=["x"], output_names=["y"],
            dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17, dynamo=False,
        )  # fmt: skip
    return buffer.getvalue()


def test_a_profiled_file_is_a_custom_workload_the_recommender_estimates(api: Api) -> None:
    response = api.client.post(URL, content=_onnx(), params={"name": "tiny_cnn"}, headers={**api.admin, **OCTETS})
    assert response.status_code == 200, response.text
    body = response.json()
    assert {b["op_class"] for b in body["custom"]["buckets"]} >= {"conv", "gemm", "elementwise"}
    assert body["custom"]["flops_per_sample"] == 2 * 8 * 8 * 8 * 3 * 9 + 8 * 8 * 8 + 2 * 8 * 8 * 8 * 10
    spec = {"custom": body["custom"], "scope": "catalog", "batch_size": 8, "limit": 5}
    answer = api.client.post("/api/v1/recommendations", json=spec, headers=api.admin)
    assert answer.status_code == 200, answer.text
    assert answer.json()["candidates"], answer.text
    assert answer.json()["candidates"][0]["estimate"]["throughput_samples_per_s"] > 0


def test_garbage_is_a_422_that_says_so(api: Api) -> None:
    response = api.client.post(URL, content=b"\x00\xffnot onnx" * 50, headers={**api.admin, **OCTETS})
    assert response.status_code == 422
    assert "not an ONNX model" in response.text


def test_an_upload_needs_a_token(api: Api) -> None:
    assert api.client.post(URL, content=_onnx(), headers=OCTETS).status_code == 401


@pytest.fixture
def small_limit(db: Database, settings: Settings) -> Iterator[Api]:
    limited = settings.model_copy(update={"max_onnx_bytes": 2048})
    with TestClient(create_app(limited, database=db)) as client:
        yield Api(client, settings.admin_token or "")


def test_an_oversize_upload_is_a_413_naming_the_limit(small_limit: Api) -> None:
    response = small_limit.client.post(URL, content=b"x" * 4096, headers={**small_limit.admin, **OCTETS})
    assert response.status_code == 413
    assert "2048 byte limit" in response.text and "profile-onnx" in response.text
