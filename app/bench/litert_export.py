"""A workload as a LiteRT (.tflite) file: the project's Keras model converted once per precision, cached.

Conversion needs TensorFlow (``tf.lite.TFLiteConverter.from_keras_model``); running the file needs
only ai-edge-litert. It runs in a child process (``python -m app.bench.litert_export``), because:
a converter crash (the int8 calibrator segfaults on some graphs) must be one config's error, not the
end of the suite; TensorFlow started by a conversion would fix the bench process's thread pools
for the keras runtimes (app/bench/tensorflow_support.py); and a big model's conversion takes GBs that
a child gives back. Files are cached per workload, size, precision, TensorFlow version and a digest
of app/bench/keras_models.py under the model cache (``HWADVISOR_CACHE_DIR``, default
``$XDG_CACHE_HOME/hwadvisor``), like the ONNX exports.

Precisions: fp32 as converted; fp16 stores float16 weights (``supported_types=[tf.float16]``);
int8 is full-integer post-training quantisation (int8 weights and activations, float32 in and out),
calibrated on random inputs drawn like the workload's.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.bench.cache import cache_root
from app.bench.needs import TENSORFLOW
from app.bench.workloads.base import SEED, Size, Workload

PRECISIONS = ("fp32", "fp16", "int8")
STATIC_BATCH = ("lstm",)
"""Recurrent models convert at a fixed batch: the converter cannot lower Keras' LSTM loop
(TensorListReserve) with an unknown batch. The others keep a dynamic batch, resized per config."""
CALIBRATION_SAMPLES = 8
CONVERT_TIMEOUT_S = 3600


def cache_dir() -> Path:
    return cache_root() / "litert"


def model_path(workload: Workload, size: Size, precision: str, batch: int) -> Path:
    """The cached .tflite file for a workload in a precision, converted on first use."""
    if precision not in PRECISIONS:
        raise ValueError(f"LiteRT models are converted in {', '.join(PRECISIONS)}, not {precision}")
    version = (TENSORFLOW.version() or "unknown").replace("+", "_")
    variant = ("-tiny" if size == "tiny" else "") + (f"-batch{batch}" if workload.info.name in STATIC_BATCH else "")
    path = cache_dir() / f"{workload.info.name}-tf{version}-{definitions_digest()}{variant}-{precision}.tflite"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        _convert_in_child(workload, size, precision, batch, path)
    return path


def definitions_digest() -> str:
    """A digest of keras_models.py (read, not imported): a changed Keras definition converts again."""
    source = Path(__file__).with_name("keras_models.py").read_bytes()
    return hashlib.sha256(source).hexdigest()[:10]


def _convert_in_child(workload: Workload, size: Size, precision: str, batch: int, path: Path) -> None:
    handle, name = tempfile.mkstemp(dir=path.parent, suffix=".tflite.tmp")
    os.close(handle)
    tmp = Path(name)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-m", "app.bench.litert_export", workload.info.name, size, precision, str(batch), name]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S)
        if done.returncode != 0:
            how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
            last = " | ".join(line for line in done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(
                f"converting {workload.info.name} to LiteRT {precision} failed ({how}): {last[-600:]}; "
                f"rerun `python {' '.join(command[1:-1])} out.tflite` to see the converter's whole output"
            )
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def convert(workload: Workload, size: Size, precision: str, batch: int) -> bytes:
    """The converted model (in this process: the child's side)."""
    import torch

    from app.bench.tensorflow_support import keras, tensorflow

    tf = tensorflow(None)
    k = keras(None)
    from app.bench import keras_models

    model = keras_models.build(workload, size)
    if workload.info.name in STATIC_BATCH:
        fixed = [k.Input(x.shape[1:], batch_size=batch, dtype=x.dtype) for x in model.inputs]
        model = k.Model(fixed, model(fixed[0] if len(fixed) == 1 else fixed))
    calibration_batch = batch if workload.info.name in STATIC_BATCH else 1
    torch.manual_seed(SEED)
    samples = [keras_models.inputs(workload, calibration_batch, size) for _ in range(CALIBRATION_SAMPLES)]

    converter: Any = tf.lite.TFLiteConverter.from_keras_model(model)
    if precision == "fp16":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.target_spec.supported_types = [tf.float16]
    elif precision == "int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda: iter(samples)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    with contextlib.redirect_stdout(io.StringIO()):  # Keras prints the traced signature
        blob: bytes = converter.convert()
    return blob


def main(argv: list[str] | None = None) -> None:
    from app.bench.workloads import workloads

    parser = argparse.ArgumentParser(description="Convert a workload's Keras model to a LiteRT file")
    parser.add_argument("workload")
    parser.add_argument("size", choices=("standard", "tiny"))
    parser.add_argument("precision", choices=PRECISIONS)
    parser.add_argument("batch", type=int)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    workload = workloads.get(args.workload)()
    args.out.write_bytes(convert(workload, args.size, args.precision, args.batch))


if __name__ == "__main__":
    main()
