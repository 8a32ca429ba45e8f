"""What the TensorFlow-based runtimes share: starting TensorFlow once, with the config's threads.

TensorFlow fixes its intra- and inter-op thread pools when its runtime starts, once per process
(``tf.config.threading`` raises afterwards). The first config that uses TensorFlow in a process
(a Keras run, or a LiteRT conversion) therefore decides its thread count; a later Keras config that
asks for another count is recorded unsupported with that reason, never run with the wrong count.
Plug-in modules import this inside their methods, so listing them never imports TensorFlow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from app.bench.workloads.base import Size, Workload


@dataclass
class _Started:
    threads: int | None
    """The intra-op threads TensorFlow was started with; None for its default (every core)."""


_started: _Started | None = None

# Before TensorFlow or Keras is imported anywhere through the bench: quiet C++ logs, Keras on TensorFlow.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def started_threads() -> tuple[bool, int | None]:
    """(whether TensorFlow has been started by this module, the intra-op threads it runs)."""
    return (_started is not None, _started.threads if _started else None)


def thread_conflict(threads: int | None) -> str | None:
    """Why a config asking for ``threads`` cannot run in this process, or None."""
    if _started is None or _started.threads == threads:
        return None
    running = f"{_started.threads} threads" if _started.threads else "its default threads (every core)"
    wanted = f"{threads} threads" if threads else "the default threads"
    return (
        f"TensorFlow fixes its thread pools once per process and this one runs {running}; "
        f"run the configs with {wanted} in a separate `hwadvisor bench` (e.g. with --only)"
    )


def tensorflow(threads: int | None) -> Any:
    """TensorFlow, started on first use with ``threads`` intra-op threads (one inter-op thread, so
    a step uses the config's cores and no more); later calls return it as it was started."""
    global _started
    import tensorflow as tf

    if _started is None:
        if threads:
            try:
                tf.config.threading.set_intra_op_parallelism_threads(threads)
                tf.config.threading.set_inter_op_parallelism_threads(1)
            except RuntimeError:
                # Something outside the bench started TensorFlow first: its pools are what they are.
                _started = _Started(tf.config.threading.get_intra_op_parallelism_threads() or None)
                return tf
        _started = _Started(threads or None)
    return tf


def keras(threads: int | None) -> Any:
    """Keras 3 on the TensorFlow backend (the only backend these runtimes measure)."""
    tensorflow(threads)
    import keras as keras_module

    if keras_module.backend.backend() != "tensorflow":
        raise RuntimeError(
            f"Keras runs on the {keras_module.backend.backend()} backend here; "
            "the keras runtimes measure TensorFlow: unset KERAS_BACKEND or set it to tensorflow"
        )
    return keras_module


def as_keras(array: np.ndarray) -> np.ndarray:
    """An input in Keras' layout: images channels-last, token ids int32."""
    import numpy as np

    if array.ndim == 4:
        return np.ascontiguousarray(array.transpose(0, 2, 3, 1))
    return array.astype(np.int32) if np.issubdtype(array.dtype, np.integer) else array


def inputs(workload: Workload, batch: int, size: Size = "standard") -> list[np.ndarray]:
    """The workload's inputs (drawn as for torch) in Keras' layout."""
    return [as_keras(x.numpy()) for x in workload.inputs(batch, size)]


def targets(workload: Workload, batch: int, size: Size = "standard") -> np.ndarray:
    import numpy as np

    return workload.targets(batch, size).numpy().astype(np.int32)
