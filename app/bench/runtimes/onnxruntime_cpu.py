"""ONNX Runtime on the CPU: the exported model, fp32, and int8 by dynamic quantization (static, QDQ,
in the int8-static variant); pruned and low-rank variants are their own exports."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from app.bench.config import BenchConfig
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.variants.base import MODEL_KINDS, VariantKind
from app.bench.workloads.base import Size, Workload
from app.contracts import MachineSpec, Precision, Task
from app.registry import Need

ONNXRUNTIME = Need("onnxruntime", "onnxruntime", alternatives=("onnxruntime-gpu",))


@runtimes.register
class OnnxRuntime(Runtime):
    info = RuntimeInfo(
        name="onnxruntime-cpu",
        description="ONNX Runtime, CPU execution provider; int8 by dynamic quantization (int8-static: QDQ)",
        tasks=(Task.infer.value,),
        precisions=("fp32", "int8"),
        needs=(ONNXRUNTIME, Need("onnx", "onnx")),
        devices=("cpu",),
        variant_kinds=(*MODEL_KINDS, VariantKind.quantisation),
    )
    provider: ClassVar[str] = "CPUExecutionProvider"

    @classmethod
    def software(cls) -> dict[str, str]:
        facts = super().software()
        if "onnxruntime" in facts:
            import onnxruntime

            facts["onnxruntime.providers"] = ",".join(onnxruntime.get_available_providers())[:200]
        return facts

    def unavailable(self) -> str | None:
        reason = super().unavailable()
        if reason:
            return reason
        import onnxruntime

        if self.provider not in onnxruntime.get_available_providers():
            return f"this onnxruntime has no {self.provider}"
        return None

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.task is not Task.infer:
            return "ONNX Runtime is measured for inference only"
        if config.precision.value not in self.info.precisions:
            allowed = ", ".join(self.info.precisions)
            return f"{self.info.name} runs {allowed} here; {config.precision.value} is not offered"
        if config.device.split(":")[0] not in self.info.devices:
            return f"{self.info.name} runs on {', '.join(self.info.devices)} devices, not {config.device}"
        if machine.device(config.device) is None:
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

    def providers(self, config: BenchConfig) -> list[Any]:
        """What the session is given: the provider, with its options where it takes any."""
        return [self.provider]

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        import onnxruntime

        from app.bench.onnx_export import model_path

        quantised: Literal["dynamic", "static"] | None = None
        if config.precision is Precision.int8:
            quantised = "static" if config.variant == "int8-static" else "dynamic"
        path = model_path(workload, size, quantised=quantised)
        session = onnxruntime.InferenceSession(
            str(path), sess_options=self.session_options(config), providers=self.providers(config)
        )
        feed = {
            name: x.numpy()
            for name, x in zip(workload.info.input_names, workload.inputs(config.batch_size, size), strict=True)
        }
        return Prepared(step=lambda: session.run(None, feed))
