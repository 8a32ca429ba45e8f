"""POST /api/v1/workloads/onnx-profile: an uploaded ONNX file becomes a custom workload the
recommender takes; oversize, garbage and unauthenticated uploads are refused."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator

import onnx
import pytest
import torch
from fastapi.testclient import TestClient
from onnx import TensorProto, helper
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


def _graph(
    nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], initializer: list[onnx.TensorProto]
) -> bytes:
    out = helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "crafted", inputs, [out], initializer=initializer)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _weight(dims: list[int]) -> onnx.TensorProto:
    tensor = TensorProto(name="w", data_type=TensorProto.FLOAT)
    tensor.dims.extend(dims)
    return tensor


def _crafted() -> dict[str, bytes]:
    """Small files a client may send that no exporter writes (each was a 500)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    relu = helper.make_node("Relu", ["x"], ["y"])
    image = helper.make_tensor_value_info("i", TensorProto.FLOAT, ["batch", 3, 8, 8])
    seq = helper.make_tensor_value_info("s", TensorProto.FLOAT, ["batch", 5, 7])
    declared = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4, 6, 6])
    relu_z = helper.make_node("Relu", ["z"], ["y"])
    return {
        "an input of 2^62-wide dimensions": _graph(
            [relu], [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", *[2**62] * 17])], []
        ),
        "a weight of 2^62-wide dimensions": _graph([relu], [x], [_weight([2**62] * 17)]),
        "a weight with a negative dimension": _graph([relu], [x], [_weight([-5, 3])]),
        "a convolution without its weight": _graph(
            [helper.make_node("Conv", ["i"], ["z"]), relu_z], [image, declared], []
        ),
        "an LSTM without W and R": _graph([helper.make_node("LSTM", ["s"], ["z"]), relu_z], [seq, declared], []),
    }


@pytest.mark.parametrize("case", list(_crafted()))
def test_a_crafted_file_is_a_422_or_an_answer_never_a_500(api: Api, case: str) -> None:
    response = api.client.post(URL, content=_crafted()[case], headers={**api.bearer(api.token("readonly")), **OCTETS})
    assert response.status_code in (200, 422), response.text


def test_a_dimension_size_in_other_digits_is_a_422(api: Api) -> None:
    """'²'.isdigit() is true, and int('²') fails: a non-ASCII digit is refused as any bad size is."""
    reader = api.bearer(api.token("readonly"))
    response = api.client.post(URL, content=_onnx(), params={"dim": "seq=²"}, headers={**reader, **OCTETS})
    assert response.status_code == 422, response.text
    assert "NAME=SIZE" in response.json()["detail"]
