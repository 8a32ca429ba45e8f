"""ONNX Runtime's CUDA provider; inputs are fed from host memory, so each step includes the copy."""

from __future__ import annotations

from app.bench.runtimes.base import RuntimeInfo, runtimes
from app.bench.runtimes.onnxruntime_cpu import OnnxRuntime
from app.contracts import Task
from app.registry import Need


@runtimes.register
class OnnxRuntimeCuda(OnnxRuntime):
    info = RuntimeInfo(
        name="onnxruntime-cuda",
        description="ONNX Runtime, CUDA execution provider (onnxruntime-gpu); inputs fed from host memory",
        tasks=(Task.infer.value,),
        precisions=("fp32",),
        needs=(
            Need("onnxruntime", "onnxruntime-gpu", install="pip install onnxruntime-gpu (in place of onnxruntime)"),
            Need("onnx", "onnx"),
        ),
        devices=("cuda",),
    )
    provider = "CUDAExecutionProvider"
