"""A workload as an ONNX file: exported from the torch model once, quantized on demand, cached.

Every ONNX-based runtime (ONNX Runtime's providers; others that read ONNX) starts from here.
Files are cached per workload (and model variant: a pruned model is its own export), size, opset,
torch version and the digest of the zoo's definitions (app/bench/cache.py ``definitions_digest``: a
changed model is exported again) under the model cache (``HWADVISOR_CACHE_DIR``, default
``$XDG_CACHE_HOME/hwadvisor``): the bench reads no server setting.

Quantisation, for ONNX Runtime's int8: ``dynamic`` (int8 weights, activations quantised per batch
as it runs: ``quantize_dynamic``) or ``static`` (the int8-static variant: weights and activations
int8, the activations' scales calibrated ahead on random inputs, QDQ format: ``quantize_static``).
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Literal

import torch

from app.bench.cache import cache_root, definitions_digest, forget_stale
from app.bench.variants.int8_static import CALIBRATION_SAMPLES
from app.bench.workloads.base import SEED, Size, Workload

OPSET = 17
Quantisation = Literal["dynamic", "static"]


def cache_dir() -> Path:
    return cache_root() / "onnx"


def model_path(workload: Workload, size: Size = "standard", *, quantised: Quantisation | None = None) -> Path:
    """The cached ONNX file for a workload (in its model variant), exported (and quantized) on first use."""
    version = torch.__version__.replace("+", "_")
    suffix = ("-tiny" if size == "tiny" else "") + {None: "", "dynamic": "-int8", "static": "-int8-static"}[quantised]
    path = cache_dir() / f"{workload.cache_name}-opset{OPSET}-torch{version}-{definitions_digest()}{suffix}.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        if quantised == "dynamic":
            _quantize_dynamic(model_path(workload, size), path)
        elif quantised == "static":
            _quantize_static(model_path(workload, size), path, calibration_feeds(workload, size))
        else:
            _export(workload, size, path)
        forget_stale(path)
    return path


def calibration_feeds(workload: Workload, size: Size) -> list[dict[str, Any]]:
    """``CALIBRATION_SAMPLES`` random inputs of one sample, drawn like the workload's (seeded), by input name."""
    torch.manual_seed(SEED)
    return [
        {name: x.numpy() for name, x in zip(workload.info.input_names, workload.inputs(1, size), strict=True)}
        for _ in range(CALIBRATION_SAMPLES)
    ]


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


def _quantize_dynamic(source: Path, path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = _atomic_target(path)
    logging.disable(logging.WARNING)  # its advice to pre-process, on the root logger, in the middle of a run
    try:
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8)
        tmp.replace(path)
    finally:
        logging.disable(logging.NOTSET)
        tmp.unlink(missing_ok=True)


def _quantize_static(source: Path, path: Path, feeds: list[dict[str, Any]]) -> None:
    """QDQ (quantize/dequantize pairs around each quantised operator, which ONNX Runtime fuses into
    int8 kernels), unsigned 8-bit activations and signed 8-bit weights: ONNX Runtime's advice for x86
    CPUs. Calibrated by min/max over the feeds."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Feeds(CalibrationDataReader):  # type: ignore[misc]  # onnxruntime is untyped
        def __init__(self) -> None:
            self.left = iter(feeds)

        def get_next(self) -> dict[str, Any] | None:
            return next(self.left, None)

    tmp = _atomic_target(path)
    logging.disable(logging.WARNING)  # it warns on the root logger for every LayerNorm bias, and to pre-process
    try:
        quantize_static(
            str(source),
            str(tmp),
            Feeds(),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        tmp.replace(path)
    finally:
        logging.disable(logging.NOTSET)
        tmp.unlink(missing_ok=True)
