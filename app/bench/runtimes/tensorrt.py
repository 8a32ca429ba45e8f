"""TensorRT through ONNX Runtime's TensorRT execution provider: the project's ONNX export compiled by
TensorRT into an engine for the GPU (cached beside the exports), fp32 or fp16 (TensorRT's fp16 kernels).

NVIDIA GPUs only: on a machine without one, or without onnxruntime-gpu built with TensorRT and the
TensorRT libraries, every config is recorded unsupported with what it needs. Nodes TensorRT cannot
take run on the CUDA provider, as ONNX Runtime places them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from app.bench.cache import cache_root
from app.bench.config import BenchConfig
from app.bench.runtimes.base import RuntimeInfo, runtimes
from app.bench.runtimes.onnxruntime_cpu import OnnxRuntime
from app.contracts import Precision, Task
from app.registry import Need

ORT_GPU_INSTALL = "pip install onnxruntime-gpu, in place of onnxruntime"


@runtimes.register
class TensorRt(OnnxRuntime):
    info = RuntimeInfo(
        name="tensorrt",
        description="TensorRT through ONNX Runtime's TensorRT execution provider, on NVIDIA GPUs; fp32, fp16",
        tasks=(Task.infer.value,),
        precisions=("fp32", "fp16"),
        needs=(
            Need("onnxruntime", "onnxruntime-gpu", install=ORT_GPU_INSTALL),
            Need("tensorrt", "tensorrt", install="pip install tensorrt-cu12", alternatives=("tensorrt-cu12",)),
            Need("onnx", "onnx"),
        ),
        devices=("cuda",),
    )
    provider: ClassVar[str] = "TensorrtExecutionProvider"

    def unavailable(self) -> str | None:
        reason = super().unavailable()
        return f"TensorRT runs on NVIDIA GPUs only, through its libraries: {reason}" if reason else None

    def providers(self, config: BenchConfig) -> list[Any]:
        index = int(config.device.split(":")[1]) if ":" in config.device else 0
        engines = cache_root() / "tensorrt"
        engines.mkdir(parents=True, exist_ok=True)
        options = {
            "device_id": index,
            "trt_fp16_enable": config.precision is Precision.fp16,
            "trt_engine_cache_enable": True,
            "trt_engine_cache_path": str(engines),
        }
        return [(self.provider, options), ("CUDAExecutionProvider", {"device_id": index})]
