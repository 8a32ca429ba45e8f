"""Software stack: OS, Python, torch (CUDA, cuDNN, CPU backends, threads), ONNX Runtime, numpy's BLAS."""

from __future__ import annotations

import platform
from typing import Any

from app.contracts import SoftwareStack
from app.probes.base import Probe, ProbeContext, probes


def _os_name(ctx: ProbeContext) -> str:
    release = ctx.sources.read("/etc/os-release") or ""
    for line in release.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return f"{platform.system()} {platform.release()}".strip()


def _torch_facts() -> dict[str, Any]:
    try:
        import torch
    except ImportError:
        return {}
    backends = {
        "mkldnn": str(torch.backends.mkldnn.is_available()).lower(),
        "mkl": str(torch.backends.mkl.is_available()).lower(),
        "openmp": str(torch.backends.openmp.is_available()).lower(),
    }
    for line in torch.__config__.parallel_info().splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("ATen parallel backend", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
            backends[key.strip()] = value.strip()
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "torch_cudnn": str(cudnn) if cudnn else None,
        "torch_cpu_backends": backends,
        "torch_num_threads": torch.get_num_threads(),
    }


def _onnxruntime_facts() -> dict[str, Any]:
    try:
        import onnxruntime
    except ImportError:
        return {}
    return {
        "onnxruntime": onnxruntime.__version__,
        "onnxruntime_providers": list(onnxruntime.get_available_providers()),
    }


def _numpy_facts() -> dict[str, Any]:
    try:
        import numpy
    except ImportError:
        return {}
    blas = None
    try:
        config = numpy.show_config(mode="dicts")
        blas_info = config.get("Build Dependencies", {}).get("blas", {})
        blas = " ".join(str(blas_info[k]) for k in ("name", "version") if blas_info.get(k)) or None
    except (TypeError, AttributeError):  # numpy < 1.26 has no mode="dicts"
        blas = None
    return {"numpy": numpy.__version__, "numpy_blas": blas}


@probes.register("software")
class SoftwareProbe(Probe):
    NAME = "software"
    order = 25

    def run(self, ctx: ProbeContext) -> None:
        if ctx.sources.captured:
            ctx.software = SoftwareStack.model_validate(ctx.captured("software"))
            return
        ctx.software = SoftwareStack(
            os=_os_name(ctx),
            kernel=platform.release() or None,
            python=platform.python_version(),
            **_torch_facts(),
            **_onnxruntime_facts(),
            **_numpy_facts(),
        )
