"""A workload as an ONNX file: exported from the torch model once, quantized on demand, cached.

Every ONNX-based runtime (ONNX Runtime's providers; others that read ONNX) starts from here.
Files are cached per workload, size, opset and torch version under the model cache
(``HWADVISOR_CACHE_DIR``, default ``$XDG_CACHE_HOME/hwadvisor``): the bench reads no server setting.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import torch

from app.bench.cache import cache_root
from app.bench.workloads.base import Size, Workload

OPSET = 17


def cache_dir() -> Path:
    return cache_root() / "onnx"


def model_path(workload: Workload, size: Size = "standard", *, int8: bool = False) -> Path:
    """The cached ONNX file for a workload, exported (and quantized) on first use."""
    version = torch.__version__.replace("+", "_")
    variant = ("-tiny" if size == "tiny" else "") + ("-int8" if int8 else "")
    path = cache_dir() / f"{workload.info.name}-opset{OPSET}-torch{version}{variant}.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        if int8:
            _quantize(model_path(workload, size), path)
        else:
            _export(workload, size, path)
    return path


def _dynamic_axes(workload: Workload) -> dict[str, dict[int, str]]:
    """The batch is dynamic; so is a token sequence's length. Image sizes stay fixed (adaptive
    pooling cannot be exported with an unknown input size), so each size has its own file."""
    axes: dict[str, dict[int, str]] = {}
    for name, sample in zip(workload.info.input_names, workload.inputs(1, "tiny"), strict=True):
        tokens = sample.dim() == 2 and not sample.is_floating_point()
        axes[name] = {0: "batch", 1: "sequence"} if tokens else {0: "batch"}
    axes["output"] = {0: "batch"}
    return axes


def _atomic_target(path: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(handle)
    return Path(name)


def _export(workload: Workload, size: Size, path: Path) -> None:
    model = workload.make(size).eval()
    tmp = _atomic_target(path)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model,
                workload.inputs(1, size),
                str(tmp),
                input_names=list(workload.info.input_names),
                output_names=["output"],
                dynamic_axes=_dynamic_axes(workload),
                opset_version=OPSET,
                dynamo=False,
            )
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _quantize(source: Path, path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = _atomic_target(path)
    try:
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
