"""Custom workloads: an ONNX file profiled into the ``custom`` a recommendation or prediction takes.

The file is the raw request body (``application/octet-stream``), not a multipart form: the server
has no multipart parser (python-multipart is not a dependency), a raw body needs none, and its size
is enforced by the body limit before anything reads it (``HWADVISOR_MAX_ONNX_BYTES``, 413). The bytes
are parsed as protobuf and shape-inferred, never run; a file whose weights live elsewhere (external
data) is refused, and no name in the file reaches the filesystem.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool

from app.contracts import Name, OnnxProfileRead, Precision
from app.errors import InvalidInput
from app.perfmodel import onnx_profile
from app.server.deps import HeavyTurn, Reader

router = APIRouter(tags=["workloads"])

ONNX_PATH = "/workloads/onnx-profile"
TOO_LARGE = "profile a larger ONNX file with `hwadvisor workloads profile-onnx FILE`, or raise HWADVISOR_MAX_ONNX_BYTES"
MAX_DIMS = 16
BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.post(ONNX_PATH, openapi_extra=BODY)
async def post_onnx_profile(
    request: Request,
    _reader: Reader,
    _turn: HeavyTurn,
    name: Annotated[Name, Query(description="The custom workload's name.")] = "onnx_model",
    precision: Annotated[Precision, Query(description="Bytes per value to count the tensors at.")] = Precision.fp32,
    dim: Annotated[
        list[str] | None,
        Query(max_length=MAX_DIMS, description="NAME=SIZE for each symbolic dimension besides the batch."),
    ] = None,
) -> OnnxProfileRead:
    """The ONNX file in the body, profiled per operator class as the zoo's models are: a ``custom``
    workload (with its buckets) to pass to POST /recommendations or /predictions, and how it was read."""
    data = await request.body()
    if not data:
        raise InvalidInput("the body is empty", hint="send the .onnx file's bytes as application/octet-stream")
    dims = onnx_profile.parse_dims(dim or [])
    found = await run_in_threadpool(onnx_profile.profile, data, precision, name=name, dims=dims)
    return found.read()
