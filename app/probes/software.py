"""Software stack: OS, Python, and what every registered runtime reports of its libraries, plus numpy's BLAS."""

from __future__ import annotations

import platform

from app.bench.runtimes.base import runtimes
from app.contracts import SoftwareStack
from app.probes.base import Probe, ProbeContext, ProbeInfo, probes


def _os_name(ctx: ProbeContext) -> str:
    release = ctx.sources.read("/etc/os-release") or ""
    for line in release.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return f"{platform.system()} {platform.release()}".strip()


def _numpy_facts() -> dict[str, str]:
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
    return {"numpy": numpy.__version__, **({"numpy.blas": blas[:200]} if blas else {})}


@probes.register
class SoftwareProbe(Probe):
    info = ProbeInfo(
        name="software", description="OS, Python, and what every runtime reports of its libraries", order=25
    )

    def run(self, ctx: ProbeContext) -> None:
        if ctx.sources.captured:
            ctx.software = SoftwareStack.model_validate(ctx.captured("software"))
            return
        libraries: dict[str, str] = {}
        for entry in runtimes:
            libraries.update(entry.plugin.software())
        libraries.update(_numpy_facts())
        ctx.software = SoftwareStack(
            os=_os_name(ctx), kernel=platform.release() or None, python=platform.python_version(), libraries=libraries
        )
