"""ONNX Runtime: the model exported once with torch.onnx and cached on disk; int8 by dynamic quantization.

The cache key is the workload, the opset and the torch version, so a torch upgrade re-exports.
Batch and sequence/spatial sizes are dynamic axes, so one file serves every batch size.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

from app.bench.config import BenchConfig
from app.bench.runtimes.base import Prepared, Runtime, runtimes
from app.bench.runtimes.torch_runtime import device_of
from app.bench.workloads import Size, Workload
from app.config import get_settings
from app.contracts import MachineSpec, Precision, Task

OPSET = 17


def cache_dir() -> Path:
    return get_settings().data_dir / "onnx"


def model_path(workload: Workload, size: Size = "standard", *, int8: bool = False) -> Path:
    """The cached ONNX file for a workload, exported (and quantized) on first use."""
    version = torch.__version__.replace("+", "_")
    variant = ("-tiny" if size == "tiny" else "") + ("-int8" if int8 else "")
    path = cache_dir() / f"{workload.NAME}-opset{OPSET}-torch{version}{variant}.onnx"
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
    for name, sample in zip(workload.input_names, workload.inputs(1, "tiny"), strict=True):
        tokens = sample.dim() == 2 and not sample.is_floating_point()
        axes[name] = {0: "batch", 1: "sequence"} if tokens else {0: "batch"}
    axes["output"] = {0: "batch"}
    return axes


def _atomic_target(path: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(handle)
    return Path(name)


def _export(workload: Workload, size: Size, path: Path) -> None:
    model = workload.make().eval()
    tmp = _atomic_target(path)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model,
                workload.inputs(1, size),
                str(tmp),
                input_names=list(workload.input_names),
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


class OnnxRuntime(Runtime):
    NAME = "onnxruntime-cpu"
    provider = "CPUExecutionProvider"
    precisions: tuple[Precision, ...] = (Precision.fp32, Precision.int8)

    def unavailable(self) -> str | None:
        if importlib.util.find_spec("onnxruntime") is None:
            return "the onnxruntime package is not installed"
        import onnxruntime

        if self.provider not in onnxruntime.get_available_providers():
            return f"this onnxruntime has no {self.provider}"
        return None

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.task is not Task.infer:
            return "ONNX Runtime is measured for inference only"
        if config.precision not in self.precisions:
            allowed = ", ".join(p.value for p in self.precisions)
            return f"{self.NAME} runs {allowed} here; {config.precision.value} is not offered"
        expected = "cpu" if self.provider == "CPUExecutionProvider" else "cuda"
        if config.device.split(":")[0] != expected:
            return f"{self.NAME} runs on {expected} devices, not {config.device}"
        if device_of(machine, config.device) is None:
            return f"this machine has no device {config.device}"
        return None

    def session_options(self, config: BenchConfig) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if config.threads:
            options.intra_op_num_threads = config.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        return options

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        import onnxruntime

        path = model_path(workload, size, int8=config.precision is Precision.int8)
        session = onnxruntime.InferenceSession(
            str(path), sess_options=self.session_options(config), providers=[self.provider]
        )
        feed = {
            name: x.numpy()
            for name, x in zip(workload.input_names, workload.inputs(config.batch_size, size), strict=True)
        }
        return Prepared(step=lambda: session.run(None, feed))


class OnnxRuntimeCuda(OnnxRuntime):
    """ONNX Runtime's CUDA provider; inputs are fed from host memory, so each step includes the copy."""

    NAME = "onnxruntime-cuda"
    provider = "CUDAExecutionProvider"
    precisions = (Precision.fp32,)


runtimes.add(OnnxRuntime.NAME, OnnxRuntime)
runtimes.add(OnnxRuntimeCuda.NAME, OnnxRuntimeCuda)
