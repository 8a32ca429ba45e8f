"""A workload as a LiteRT (.tflite) file: the project's Keras model converted once per precision, cached.

Conversion needs TensorFlow; running the file needs only ai-edge-litert. It runs in a child process
(``python -m app.bench.litert_export``), because: a converter crash (the int8 calibrator segfaults on
some graphs) must be one config's error, not the end of the suite; TensorFlow started by a conversion
would fix the bench process's thread pools for the keras runtimes (app/bench/tensorflow_support.py);
and a big model's conversion takes GBs that a child gives back. Files are cached per workload, size,
precision, TensorFlow version and the digest of the zoo's definitions (app/bench/cache.py
``definitions_digest``) under the model cache (``HWADVISOR_CACHE_DIR``, default
``$XDG_CACHE_HOME/hwadvisor``), like the ONNX exports.

One child converts every form of a model that is asked for at once (``model_paths``; a suite's
LiteRT configs of one model, through ``LiteRt.ahead``): most of a conversion is exporting the Keras
model to a SavedModel (tracing it and writing its graph), which the forms share, and starting
TensorFlow. The child writes each file as soon as it is made, the full-integer form last, so a
calibrator crash loses that form alone, and the config that asked for it meets the crash again,
converting on its own, as its error.

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
import functools
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

from app.bench.cache import cache_root, definitions_digest, forget_stale
from app.bench.needs import TENSORFLOW
from app.bench.variants.int8_static import CALIBRATION_SAMPLES
from app.bench.workloads.base import SEED, Size, Workload

FORMATS = ("fp32", "fp16", "int8", "int8-static")
"""In the order a child converts them: full-integer, whose calibrator is the one that crashes, last."""
STATIC_BATCH = ("lstm",)
"""Recurrent models convert at a fixed batch: the converter cannot lower Keras' LSTM loop
(TensorListReserve) with an unknown batch. The others keep a dynamic batch, resized per config."""
CONVERT_TIMEOUT_S = 3600


def cache_dir() -> Path:
    return cache_root() / "litert"


def cached_path(workload: Workload, size: Size, form: str, batch: int) -> Path:
    """Where the .tflite file for a workload (in its model variant) in a format is cached, made or not."""
    if form not in FORMATS:
        raise ValueError(f"LiteRT models are converted in {', '.join(FORMATS)}, not {form}")
    version = (TENSORFLOW.version() or "unknown").replace("+", "_")
    suffix = ("-tiny" if size == "tiny" else "") + (f"-batch{batch}" if workload.info.name in STATIC_BATCH else "")
    return cache_dir() / f"{workload.cache_name}-tf{version}-{definitions_digest()}{suffix}-{form}.tflite"


def model_path(workload: Workload, size: Size, form: str, batch: int) -> Path:
    """The cached .tflite file for a workload (in its model variant) in a format, converted on first use."""
    return model_paths(workload, size, [form], batch)[form]


def model_paths(workload: Workload, size: Size, forms: Collection[str], batch: int) -> dict[str, Path]:
    """The cached .tflite files for a workload in each of ``forms``, those not yet made converted in
    one child. A form the child did not make raises RuntimeError with the converter's last words."""
    paths = {form: cached_path(workload, size, form, batch) for form in FORMATS if form in forms}
    missing = {form: path for form, path in paths.items() if not path.is_file()}
    if missing:
        cache_dir().mkdir(parents=True, exist_ok=True)
        _convert_in_child(workload, size, missing, batch)
    return paths


def _convert_in_child(workload: Workload, size: Size, paths: dict[str, Path], batch: int) -> None:
    work = Path(tempfile.mkdtemp(dir=cache_dir(), suffix=".tmp"))
    made = {form: work / f"{form}.tflite" for form in paths}
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-m", "app.bench.litert_export", workload.info.name, size, str(batch)]
    if workload.variant is not None and workload.variant.changes_model:
        command += ["--variant", workload.variant.info.name]
    command += [f"{form}={out}" for form, out in made.items()]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S)
        for form, out in made.items():  # what the child finished, even where it died on a later form
            if out.is_file():
                out.replace(paths[form])
                forget_stale(paths[form])
        if lost := [form for form in paths if not paths[form].is_file()]:
            how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
            last = " | ".join(line for line in done.stderr.strip().splitlines()[-3:])
            rerun = " ".join([*command[1 : -len(made)], f"{lost[0]}=out.tflite"])
            raise RuntimeError(
                f"converting {workload.cache_name} to LiteRT {', '.join(lost)} failed ({how}): {last[-600:]}; "
                f"rerun `python {rerun}` to see the converter's whole output"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def convert(workload: Workload, size: Size, outputs: dict[str, Path], batch: int) -> None:
    """Convert the model to each form of ``outputs`` and write it there, each as soon as it is made
    (in this process: the child's side). The forms share one SavedModel export of the Keras model,
    made as ``TFLiteConverter.from_keras_model`` makes it for Keras 3: the call in inference mode."""
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

    with tempfile.TemporaryDirectory() as exported:
        archive = k.export.ExportArchive()
        archive.track(model)
        signature = [tf.TensorSpec(x.shape, dtype=x.dtype, name=x.name) for x in model.inputs]
        archive.add_endpoint("serve", functools.partial(model.__call__, training=False), signature)
        with contextlib.redirect_stdout(io.StringIO()):  # Keras prints the endpoint's signature
            archive.write_out(exported)
        for form in FORMATS:
            if form not in outputs:
                continue
            converter: Any = tf.lite.TFLiteConverter.from_saved_model(exported)
            if form == "fp16":
                converter.optimizations = [tf.lite.Optimize.DEFAULT]
                converter.target_spec.supported_types = [tf.float16]
            elif form == "int8":
                converter.optimizations = [tf.lite.Optimize.DEFAULT]  # no calibration data: dynamic range
            elif form == "int8-static":
                converter.optimizations = [tf.lite.Optimize.DEFAULT]
                converter.representative_dataset = lambda: iter(samples)
                converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            blob: bytes = converter.convert()
            part = outputs[form].with_suffix(".part")
            part.write_bytes(blob)
            part.replace(outputs[form])


def _output(text: str) -> tuple[str, Path]:
    form, found, path = text.partition("=")
    if not found or form not in FORMATS:
        raise argparse.ArgumentTypeError(f"give FORM=PATH with FORM one of {', '.join(FORMATS)}, not {text!r}")
    return form, Path(path)


def main(argv: list[str] | None = None) -> None:
    from app.bench.variants import workload_for

    parser = argparse.ArgumentParser(description="Convert a workload's Keras model to LiteRT files")
    parser.add_argument("workload")
    parser.add_argument("size", choices=("standard", "tiny"))
    parser.add_argument("batch", type=int)
    parser.add_argument("--variant", help="a model variant (pruned-50): the Keras model at its widths")
    parser.add_argument("outputs", nargs="+", type=_output, metavar="FORM=PATH", help=f"FORM: {', '.join(FORMATS)}")
    args = parser.parse_args(argv)
    workload = workload_for(args.workload, args.variant)
    convert(workload, args.size, dict(args.outputs), args.batch)


if __name__ == "__main__":
    main()
