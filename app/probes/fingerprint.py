"""A stable machine id: the same across reboots, different when the hardware changes."""

from __future__ import annotations

import hashlib
import json

from app.contracts import CpuInfo, Device, MemoryInfo
from app.probes.sources import Sources

GIB_MB = 1024


def host_identity(sources: Sources) -> str:
    """/etc/machine-id (stable per OS install, unique per host), else the hostname.

    Without it, two identical CPU-only machines would share a fingerprint."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        text = (sources.read(path) or "").strip()
        if text:
            return text
    return sources.hostname()


def fingerprint(
    sources: Sources, cpu: CpuInfo, memory: MemoryInfo, gpus: list[Device], *, instance: str | None = None
) -> str:
    """``instance`` names one of several agents on one host (say one per GPU, each started with its
    own CUDA_VISIBLE_DEVICES and HWADVISOR_AGENT_INSTANCE): each is then a machine of its own."""
    identity = {
        "host": host_identity(sources) + (f"/{instance}" if instance else ""),
        "cpu": [
            cpu.model_name,
            cpu.family,
            cpu.model,
            cpu.stepping,
            cpu.sockets,
            cpu.physical_cores,
            cpu.logical_cores,
        ],
        # Rounded to whole GiB: the kernel's reserved memory moves a little between boots.
        "memory_gib": round(memory.total_mb / GIB_MB),
        "gpus": sorted(d.nvidia.uuid if d.nvidia else d.name for d in gpus),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]
