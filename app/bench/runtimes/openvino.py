"""OpenVINO on the CPU: the project's ONNX export, compiled for one synchronous request (latency hint).

fp32 runs with the f32 inference-precision hint, bf16 with the bf16 hint where the CPU has bf16
instructions (OpenVINO would otherwise run f32 silently: a precision is never substituted here).
int8 is the int8-static variant: NNCF's post-training quantisation of the model (weights and
activations, calibrated on random inputs), saved as OpenVINO IR and cached beside the ONNX exports.
OpenVINO has no dynamic quantisation of a float model, so int8 without that variant says so.
Pruned and low-rank variants are their own ONNX exports.
"""

from __future__ import annotations

import contextlib
import io
import logging
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from app.bench.cache import cache_root, definitions_digest, forget_stale
from app.bench.config import BenchConfig
from app.bench.precision import cpu_unsupported
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.variants.base import MODEL_KINDS, VariantKind
from app.bench.workloads.base import Size, Workload
from app.contracts import MachineSpec, Precision, Task
from app.registry import Need

OPENVINO_INSTALL = "pip install 'openvino==2026.4.*' 'nncf==3.4.*', or ./scripts/setup on Linux x86-64"
OPENVINO = Need("openvino", "openvino", install=OPENVINO_INSTALL)
NNCF = Need("nncf", "nncf", install=OPENVINO_INSTALL)

INFERENCE_PRECISION = {Precision.fp32: "f32", Precision.bf16: "bf16", Precision.int8: "f32"}
"""OpenVINO's inference-precision hint for each precision it is measured in (an int8 model's
quantised operators run in int8 whatever the hint; the rest stay f32, never bf16 behind its back)."""


@runtimes.register
class OpenVino(Runtime):
    info = RuntimeInfo(
        name="openvino",
        description=(
            "OpenVINO CPU plug-in on the ONNX export; latency hint, one synchronous request; fp32, bf16, "
            "int8 (the int8-static variant: NNCF)"
        ),
        tasks=(Task.infer.value,),
        precisions=tuple(p.value for p in INFERENCE_PRECISION),
        needs=(OPENVINO, Need("onnx", "onnx")),
        devices=("cpu",),
        variant_kinds=(*MODEL_KINDS, VariantKind.quantisation),
    )
    device: ClassVar[str] = "CPU"

    @classmethod
    def software(cls) -> dict[str, str]:
        facts = super().software()
        if "openvino" in facts:
            import openvino

            core = openvino.Core()
            facts["openvino.build"] = openvino.get_version()[:200]
            facts["openvino.cpu"] = str(core.get_property(cls.device, "FULL_DEVICE_NAME"))[:200]
            capabilities = core.get_property(cls.device, "OPTIMIZATION_CAPABILITIES")
            facts["openvino.capabilities"] = ",".join(capabilities)[:200]
        return facts

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.task is not Task.infer:
            return "OpenVINO is measured for inference only (it does not train)"
        if config.device.split(":")[0] not in self.info.devices:
            return f"{self.info.name} runs on {', '.join(self.info.devices)} devices, not {config.device}"
        if machine.device(config.device) is None:
            return f"this machine has no device {config.device}"
        if config.precision is Precision.int8:
            if config.variant != "int8-static":
                return (
                    "OpenVINO's int8 is static post-training quantisation (NNCF): ask variant int8-static "
                    "(int8 without a variant is dynamic quantisation, which OpenVINO does not do to a float model)"
                )
            if NNCF.missing():
                return f"int8-static needs nncf ({NNCF.install_command})"
        if config.precision is Precision.tf32:
            return cpu_unsupported(Precision.tf32, machine.cpu)
        if config.precision is Precision.fp16:
            return "OpenVINO's CPU plug-in is measured in fp32 and bf16 here; fp16 is not offered"
        if config.precision is Precision.bf16:
            return cpu_unsupported(Precision.bf16, machine.cpu) or self._plugin_lacks("BF16")
        return None

    def _plugin_lacks(self, capability: str) -> str | None:
        """Why this machine's OpenVINO CPU plug-in would not run the capability natively, or None."""
        if self.unavailable():
            return None
        import openvino

        capabilities = openvino.Core().get_property(self.device, "OPTIMIZATION_CAPABILITIES")
        if capability in capabilities:
            return None
        return f"OpenVINO's CPU plug-in offers {', '.join(capabilities)} here, not {capability}"

    def compile_config(self, config: BenchConfig) -> dict[str, Any]:
        """One request at a time is what the harness times: the latency hint sizes the plug-in for it."""
        properties: dict[str, Any] = {
            "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": INFERENCE_PRECISION[config.precision],
        }
        if config.threads:
            properties["INFERENCE_NUM_THREADS"] = config.threads
        return properties

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        import openvino

        compiled, inputs = compiled_model(self, config, workload, size, config.batch_size)
        request = compiled.create_infer_request()
        for name, array in inputs.items():
            request.set_tensor(name, openvino.Tensor(array))
        return Prepared(step=lambda: request.infer(share_outputs=True))


def compiled_model(
    runtime: OpenVino, config: BenchConfig, workload: Workload, size: Size, batch: int
) -> tuple[Any, dict[str, Any]]:
    """The config's model (the ONNX export, or NNCF's int8) compiled with the runtime's properties at a
    static ``batch``, and one batch of inputs for it (numpy arrays by input name)."""
    import openvino

    from app.bench.onnx_export import model_path

    core = openvino.Core()
    if config.precision is Precision.int8:
        model = core.read_model(str(quantised_path(workload, size)))
    else:
        model = core.read_model(str(model_path(workload, size)))
    inputs = {name: x.numpy() for name, x in zip(workload.info.input_names, workload.inputs(batch, size), strict=True)}
    # The export's batch (and sequence) axes are dynamic; a static shape lets the plug-in plan for it.
    model.reshape({name: openvino.PartialShape(list(array.shape)) for name, array in inputs.items()})
    return core.compile_model(model, runtime.device, runtime.compile_config(config)), inputs


def quantised_path(workload: Workload, size: Size) -> Path:
    """The workload's model quantised by NNCF (OpenVINO IR: an .xml and its .bin), made on first use
    from the ONNX export and the same calibration inputs ONNX Runtime's static quantisation uses."""
    import openvino

    from app.bench.onnx_export import OPSET, calibration_feeds, model_path

    version = openvino.get_version().split("-")[0].replace("+", "_")
    suffix = "-tiny" if size == "tiny" else ""
    name = f"{workload.cache_name}-opset{OPSET}-ov{version}-{definitions_digest()}{suffix}-int8-static.xml"
    path = cache_root() / "openvino" / name
    if path.is_file() and path.with_suffix(".bin").is_file():
        return path
    import nncf

    nncf.set_log_level(logging.WARNING)
    source = model_path(workload, size)
    path.parent.mkdir(parents=True, exist_ok=True)
    feeds = calibration_feeds(workload, size)
    with contextlib.redirect_stdout(io.StringIO()):  # its progress bars, drawn in the middle of a bench run
        quantised = nncf.quantize(openvino.Core().read_model(str(source)), nncf.Dataset(feeds), subset_size=len(feeds))
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        made = Path(scratch) / "model.xml"
        openvino.save_model(quantised, str(made))
        made.with_suffix(".bin").replace(path.with_suffix(".bin"))  # the weights first: the .xml says it is done
        made.replace(path)
    forget_stale(path)
    forget_stale(path.with_suffix(".bin"))
    return path
