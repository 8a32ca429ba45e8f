"""LiteRT (TensorFlow Lite) on the CPU: the project's Keras models converted to .tflite
(app/bench/litert_export.py), run by ai-edge-litert's interpreter with XNNPACK, its default delegate.

fp32; fp16 is the float16-weight model: XNNPACK turns the weights back into fp32 when it loads the
model, so the arithmetic is fp32 and what differs is the file and its load (the runtime's
description says so); int8 is dynamic-range quantisation (int8 weights, activations quantised as it
runs), as ONNX Runtime's int8 is; the int8-static variant is full-integer post-training quantisation.
Pruned variants are the Keras models built at the pruned widths. Inference only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.bench.config import BenchConfig
from app.bench.needs import KERAS, LITERT, TENSORFLOW
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.runtimes.keras_tf import keras_variant_unsupported, keras_workload_unsupported
from app.bench.variants.base import Variant, VariantKind
from app.bench.workloads.base import Size, Workload
from app.contracts import MachineSpec, Precision, Task

NOT_CONVERTIBLE = {
    ("lstm", "int8-static"): "LiteRT int8-static of the LSTM is not offered: TensorFlow 2.21's full-integer "
    "calibrator crashes (segfault) on the Keras LSTM loop; fp32, fp16 and int8 (dynamic range) run",
}


def form_of(config: BenchConfig) -> str:
    """The converted file a config runs: its precision, or int8-static for int8 in that variant (the
    variant in another precision is refused by the variant itself)."""
    if config.variant == "int8-static" and config.precision is Precision.int8:
        return "int8-static"
    return config.precision.value


@runtimes.register
class LiteRt(Runtime):
    info = RuntimeInfo(
        name="litert",
        description=(
            "LiteRT (TensorFlow Lite) interpreter, XNNPACK, on the Keras models converted to .tflite; "
            "fp32, fp16 (float16 weights, fp32 arithmetic), int8 (dynamic range; int8-static: full-integer PTQ)"
        ),
        tasks=(Task.infer.value,),
        precisions=("fp32", "fp16", "int8"),
        needs=(LITERT, TENSORFLOW, KERAS),
        devices=("cpu",),
        variant_kinds=(VariantKind.pruning, VariantKind.quantisation),
    )

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.task is not Task.infer:
            return "LiteRT is measured for inference only (it does not train)"
        reason = keras_workload_unsupported(self.info.name, config, machine)
        if reason:
            return reason
        if config.precision.value not in self.info.precisions:
            return f"{self.info.name} runs fp32, fp16 (weights) and int8 here; {config.precision.value} is not offered"
        return NOT_CONVERTIBLE.get((config.workload, form_of(config)))

    def variant_unsupported(self, variant: Variant, config: BenchConfig) -> str | None:
        return super().variant_unsupported(variant, config) or keras_variant_unsupported(
            self.info.name, variant, config
        )

    def ahead(self, config: BenchConfig, later: Sequence[BenchConfig], size: Size) -> None:
        """Convert every form of the config's model that it and the later configs run, in one child:
        the forms share the Keras model's export, most of a conversion's time."""
        from app.bench.litert_export import STATIC_BATCH, model_paths
        from app.bench.variants import workload_for

        def model_of(c: BenchConfig) -> tuple[str, int | None]:
            """The file family a config runs: its model (in a variant that changes it), at a fixed batch."""
            return workload_for(c.workload, c.variant).cache_name, c.batch_size if c.workload in STATIC_BATCH else None

        model = model_of(config)
        forms = {form_of(c) for c in [config, *later] if model_of(c) == model}
        model_paths(workload_for(config.workload, config.variant), size, forms, config.batch_size)

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        from ai_edge_litert.interpreter import Interpreter

        from app.bench.litert_export import model_path
        from app.bench.tensorflow_support import inputs

        path = model_path(workload, size, form_of(config), config.batch_size)
        interpreter = Interpreter(model_path=str(path), num_threads=config.threads)
        arrays = inputs(workload, config.batch_size, size)
        details = interpreter.get_input_details()
        for detail, array in zip(details, arrays, strict=True):
            if tuple(detail["shape"]) != array.shape:
                interpreter.resize_tensor_input(detail["index"], array.shape)
        interpreter.allocate_tensors()
        for detail, array in zip(details, arrays, strict=True):
            interpreter.set_tensor(detail["index"], array.astype(detail["dtype"], copy=False))
        outputs = interpreter.get_output_details()

        def step() -> list[Any]:
            interpreter.invoke()
            return [interpreter.get_tensor(output["index"]) for output in outputs]

        return Prepared(step=step)
