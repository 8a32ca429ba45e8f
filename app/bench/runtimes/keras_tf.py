"""Keras 3 on TensorFlow (CPU): the zoo's models built in Keras (app/bench/keras_models.py), random weights.

``keras`` calls the model eagerly, op by op (as torch-eager does); ``keras-xla`` runs the same step in a
``tf.function(jit_compile=True)``, compiled by XLA on the first call (timed apart, as compile_time_s).
Training is one SGD step (momentum 0.9) through a GradientTape. fp32 only. TensorFlow fixes its
thread pools once per process: see app/bench/tensorflow_support.py for what a second thread count gets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.bench.config import BenchConfig
from app.bench.keras_zoo import KERAS_UNPRUNABLE, KERAS_WORKLOADS
from app.bench.needs import KERAS, TENSORFLOW
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.variants.base import Variant, VariantKind
from app.bench.workloads.base import Size, Workload
from app.contracts import MachineSpec, Precision, Task


def keras_variant_unsupported(runtime: str, variant: Variant, config: BenchConfig) -> str | None:
    """Which model variants the Keras definitions are built in: pruned ones, at the torch surgery's widths."""
    if variant.changes_model and variant.keras_pruning() is None:
        return (
            f"{runtime} runs Keras definitions, which are not built in variant {variant.info.name} "
            "(only pruned ones are); the torch and ONNX runtimes measure it"
        )
    if variant.changes_model and config.workload in KERAS_UNPRUNABLE:
        return f"{config.workload}'s Keras definition is keras.applications', which cannot be built pruned"
    return None


def keras_workload_unsupported(runtime: str, config: BenchConfig, machine: MachineSpec) -> str | None:
    """What the TensorFlow-based runtimes share: the workloads defined in Keras, on this machine's CPU."""
    if config.workload not in KERAS_WORKLOADS:
        return f"{config.workload} has no Keras definition in the project; {runtime} runs {', '.join(KERAS_WORKLOADS)}"
    if config.device != "cpu":
        return f"{runtime} runs on the CPU only (tensorflow-cpu has no GPU support), not {config.device}"
    if machine.device(config.device) is None:
        return f"this machine has no device {config.device}"
    return None


@runtimes.register
class KerasEager(Runtime):
    info = RuntimeInfo(
        name="keras",
        description="Keras 3 on TensorFlow (CPU), eager: the model called op by op; fp32; train = one SGD step",
        tasks=(Task.infer.value, Task.train.value),
        precisions=("fp32",),
        needs=(TENSORFLOW, KERAS),
        devices=("cpu",),
        variant_kinds=(VariantKind.pruning,),
    )

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        from app.bench.tensorflow_support import thread_conflict

        reason = keras_workload_unsupported(self.info.name, config, machine)
        if reason:
            return reason
        if config.precision is not Precision.fp32:
            return (
                f"{self.info.name} is measured in fp32 here; {config.precision.value} is not offered "
                "(bf16: torch-eager or openvino; int8 and fp16 weights: litert)"
            )
        return thread_conflict(config.threads)

    def variant_unsupported(self, variant: Variant, config: BenchConfig) -> str | None:
        return super().variant_unsupported(variant, config) or keras_variant_unsupported(
            self.info.name, variant, config
        )

    def wrap(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        from app.bench.tensorflow_support import keras, tensorflow

        tf = tensorflow(config.threads)
        k = keras(config.threads)
        from app.bench import keras_models

        model = keras_models.build(workload, size)
        arrays = [tf.constant(x) for x in keras_models.inputs(workload, config.batch_size, size)]
        x = arrays[0] if len(arrays) == 1 else arrays

        if config.task is Task.train:
            target = tf.constant(keras_models.targets(workload, config.batch_size, size))
            loss_of = keras_models.loss(workload)
            optimizer = k.optimizers.SGD(learning_rate=0.01, momentum=0.9)
            optimizer.build(model.trainable_variables)

            def forward() -> Any:
                with tf.GradientTape() as tape:
                    loss = loss_of(target, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                # As torch's SGD skips a parameter without a gradient (BERT's pooler, unread by the span head).
                pairs = [(g, v) for g, v in zip(grads, model.trainable_variables, strict=True) if g is not None]
                optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])
                return loss

        else:

            def forward() -> Any:
                return model(x, training=False)

        step = self.wrap(forward)
        compile_time = None
        if step is not forward:
            start = time.perf_counter()
            step()
            compile_time = time.perf_counter() - start

        def close() -> None:
            k.backend.clear_session(free_memory=True)

        return Prepared(step=step, compile_time_s=compile_time, close=close)


@runtimes.register
class KerasXla(KerasEager):
    info = RuntimeInfo(
        name="keras-xla",
        description="Keras 3 on TensorFlow (CPU), the step in tf.function(jit_compile=True): XLA; compile time apart",
        tasks=KerasEager.info.tasks,
        precisions=KerasEager.info.precisions,
        needs=KerasEager.info.needs,
        devices=KerasEager.info.devices,
        variant_kinds=KerasEager.info.variant_kinds,
    )

    def wrap(self, step: Callable[[], Any]) -> Callable[[], Any]:
        import tensorflow as tf

        compiled: Callable[[], Any] = tf.function(step, jit_compile=True, autograph=False)
        return compiled
