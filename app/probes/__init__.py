"""Probes describe the machine a result is measured on, and never raise into the agent.

Each registered probe fills one part of the MachineSpec. A probe that cannot run records why in
``probe_errors``; the parts it would have filled fall back to what the standard library can
tell, so the spec is always complete and always valid.
"""

from __future__ import annotations

import os
import platform
from typing import Any

from app import catalog
from app.contracts import CpuInfo, Device, DeviceKind, MachineSpec, MemoryInfo, PowerSensors, SoftwareStack
from app.probes.base import Probe, ProbeContext, probes
from app.probes.fingerprint import fingerprint
from app.probes.sources import HostSources, Sources

__all__ = ["Probe", "ProbeContext", "probe_machine", "probes"]


def _fallback_cpu(sources: Sources) -> CpuInfo:
    count = sources.affinity() or os.cpu_count() or 1
    return CpuInfo(
        arch=sources.machine() or "unknown",
        model_name="unknown CPU",
        sockets=1,
        physical_cores=count,
        logical_cores=count,
        threads_per_core=1,
        effective_cpus=float(count),
        effective_cpus_reason="the cpu probe failed; this is the scheduler's CPU count",
    )


def _cpu_device(cpu_info: CpuInfo, memory_info: MemoryInfo) -> Device:
    catalog_id, note = catalog.match_cpu(cpu_info.model_name)
    return Device(
        id="cpu",
        kind=DeviceKind.cpu,
        name=cpu_info.model_name,
        memory_total_mb=memory_info.total_mb,
        catalog_id=catalog_id,
        catalog_note=note,
    )


def probe_machine(
    sources: Sources | None = None,
    *,
    nvml: Any | None = None,
    cuda_sm_counts: dict[str, int] | None = None,
    instance: str | None = None,
) -> MachineSpec:
    """Run every registered probe in order and assemble the MachineSpec.

    ``instance`` (default: HWADVISOR_AGENT_INSTANCE) tells apart several agents on one host."""
    instance = instance if instance is not None else os.environ.get("HWADVISOR_AGENT_INSTANCE") or None
    ctx = ProbeContext(sources=sources or HostSources(), nvml=nvml, cuda_sm_counts=cuda_sm_counts)
    for entry in sorted(probes, key=lambda e: (e.plugin.info.order, e.name)):
        try:
            entry.plugin().run(ctx)
        except Exception as exc:  # a probe must never take the agent down
            ctx.fail(entry.name, f"{exc.__class__.__name__}: {exc}")
    cpu_info = ctx.cpu or _fallback_cpu(ctx.sources)
    memory_info = ctx.memory or MemoryInfo(total_mb=0, available_mb=0)
    software_info = ctx.software or SoftwareStack(os=platform.system() or "unknown", python=platform.python_version())
    return MachineSpec(
        fingerprint=fingerprint(ctx.sources, cpu_info, memory_info, ctx.gpus, instance=instance),
        hostname=(ctx.sources.hostname() + (f"/{instance}" if instance else ""))[:200] or "unknown",
        cpu=cpu_info,
        memory=memory_info,
        devices=[_cpu_device(cpu_info, memory_info), *ctx.gpus],
        software=software_info,
        power_sensors=ctx.power or PowerSensors(),
        facts=ctx.facts,
        probe_errors=ctx.errors,
    )
