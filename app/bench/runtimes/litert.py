"""LiteRT (TensorFlow Lite) on the CPU: the project's Keras models converted to .tflite
(app/bench/litert_export.py), run by ai-edge-litert's interpreter with XNNPACK, its default delegate.

fp32; fp16 is the float16-weight model: XNNPACK turns the weights back into fp32 when it loads the
model, so the arithmetic is fp32 and what differs is the file and its load (the runtime's
description says so); int8 is full-integer post-training quantisation. Inference only.
"""

from __future__ import annotations

from typing import Any

from app.bench.config import BenchConfig
from app.bench.needs import KERAS, LITERT, TENSORFLOW
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.runtimes.keras_tf import keras_workload_unsupported
from app.bench.workloads.base import Size, Workload
from app.contracts import MachineSpec, Task

NOT_CONVERTIBLE = {
    ("lstm", "int8"): "LiteRT int8 of the LSTM is not offered: TensorFlow 2.21's full-integer calibrator "
    "crashes (segfault) on the Keras LSTM loop; fp32 and fp16 run",
}


@runtimes.register
class LiteRt(Runtime):
    info = RuntimeInfo(
        name="litert",
        description=(
            "LiteRT (TensorFlow Lite) interpreter, XNNPACK, on the Keras models converted to .tflite; "
            "fp32, fp16 (float16 weights, fp32 arithmetic), int8 (full-integer PTQ)"
        ),
        tasks=(Task.infer.value,),
        precisions=("fp32", "fp16", "int8"),
        needs=(LITERT, TENSORFLOW, KERAS),
        devices=("cpu",),
    )

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.task is not Task.infer:
            return "LiteRT is measured for inference only (it does not train)"
        reason = keras_workload_unsupported(self.info.name, config, machine)
        if reason:
            return reason
        if config.precision.value not in self.info.precisions:
            return f"{self.info.name} runs fp32, fp16 (weights) and int8 here; {config.precision.value} is not offered"
        return NOT_CONVERTIBLE.get((config.workload, config.precision.value))

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        from ai_edge_litert.interpreter import Interpreter

        from app.bench.litert_export import model_path
        from app.bench.tensorflow_support import inputs

        path = model_path(workload, size, config.precision.value, config.batch_size)
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
