"""A workload as a LiteRT (.tflite) file: the project's Keras model converted once per precision, cached.

Conversion needs TensorFlow (``tf.lite.TFLiteConverter.from_keras_model``); running the file needs
only ai-edge-litert. It runs in a child process (``python -m app.bench.litert_export``), because:
a converter crash (the int8 calibrator segfaults on some graphs) must be one config's error, not the
end of the suite; TensorFlow started by a conversion would fix the bench process's thread pools
for the keras runtimes (app/bench/tensorflow_support.py); and a big model's conversion takes GBs that
a child gives back. Files are cached per workload, size, precision, TensorFlow version and the digest
of the zoo's definitions (app/bench/cache.py ``definitions_digest``) under the model cache
(``HWADVISOR_CACHE_DIR``, default ``$XDG_CACHE_HOME/hwadvisor``), like the ONNX exports.

Formats: fp32 as converted; fp16 stores float16 weights (``supported_types=[tf.float16]``); int8 is
dynamic-range quantisation (int8 weights, activations quantised per batch as it runs: the converter's
``Optimize.DEFAULT`` without calibration data), the same kind as ONNX Runtime's int8; int8-static
(the int8-static variant) is full-integer post-training quantisation (int8 weights and activations,
float32 in and out), calibrated on random inputs drawn like the workload's. A pruned variant is the
Keras model built at the pruned widths (app/bench/keras_models.py), its own file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.bench.cache import cache_root, definitions_digest, forget_stale
from app.bench.needs import TENSORFLOW
from app.bench.variants.int8_static import CALIBRATION_SAMPLES
from app.bench.workloads.base import SEED, Size, Workload

FORMATS = ("fp32", "fp16", "int8", "int8-static")
STATIC_BATCH = ("lstm",)
"""Recurrent models convert at a fixed batch: the converter cannot lower Keras' LSTM loop
(TensorListReserve) with an unknown batch. The others keep a dynamic batch, resized per config."""
CONVERT_TIMEOUT_S = 3600


def cache_dir() -> Path:
    return cache_root() / "litert"


def model_path(workload: Workload, size: Size, form: str, batch: int) -> Path:
    """The cached .tflite file for a workload (in its model variant) in a format, converted on first use."""
    if form not in FORMATS:
        raise ValueError(f"LiteRT models are converted in {', '.join(FORMATS)}, not {form}")
    version = (TENSORFLOW.version() or "unknown").replace("+", "_")
    suffix = ("-tiny" if size == "tiny" else "") + (f"-batch{batch}" if workload.info.name in STATIC_BATCH else "")
    path = cache_dir() / f"{workload.cache_name}-tf{version}-{definitions_digest()}{suffix}-{form}.tflite"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        _convert_in_child(workload, size, form, batch, path)
        forget_stale(path)
    return path


def _convert_in_child(workload: Workload, size: Size, form: str, batch: int, path: Path) -> None:
    handle, name = tempfile.mkstemp(dir=path.parent, suffix=".tflite.tmp")
    os.close(handle)
    tmp = Path(name)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-m", "app.bench.litert_export", workload.info.name, size, form, str(batch), name]
    if workload.variant is not None and workload.variant.changes_model:
        command[-1:-1] = ["--variant", workload.variant.info.name]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S)
        if done.returncode != 0:
            how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
            last = " | ".join(line for line in done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(
                f"converting {workload.cache_name} to LiteRT {form} failed ({how}): {last[-600:]}; "
                f"rerun `python {' '.join(command[1:-1])} out.tflite` to see the converter's whole output"
            )
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def convert(workload: Workload, size: Size, form: str, batch: int) -> bytes:
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
    if form == "fp16":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.target_spec.supported_types = [tf.float16]
    elif form == "int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]  # no calibration data: dynamic range
    elif form == "int8-static":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda: iter(samples)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    with contextlib.redirect_stdout(io.StringIO()):  # Keras prints the traced signature
        blob: bytes = converter.convert()
    return blob


def main(argv: list[str] | None = None) -> None:
    from app.bench.variants import workload_for

    parser = argparse.ArgumentParser(description="Convert a workload's Keras model to a LiteRT file")
    parser.add_argument("workload")
    parser.add_argument("size", choices=("standard", "tiny"))
    parser.add_argument("format", choices=FORMATS)
    parser.add_argument("batch", type=int)
    parser.add_argument("--variant", help="a model variant (pruned-50): the Keras model at its widths")
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    workload = workload_for(args.workload, args.variant)
    args.out.write_bytes(convert(workload, args.size, args.format, args.batch))


if __name__ == "__main__":
    main()
