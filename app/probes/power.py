"""Power sensors: readable RAPL energy counters (powercap) and the NVML energy counter."""

from __future__ import annotations

from app.contracts import PowerSensors
from app.probes.base import Probe, ProbeContext, ProbeInfo, probes

POWERCAP = "/sys/class/powercap"


def rapl_domains(ctx: ProbeContext) -> list[str]:
    """Names of RAPL zones whose energy counter this user can read (package-0, dram, ...)."""
    readable = []
    for zone in ctx.sources.listdir(POWERCAP):
        if not zone.startswith("intel-rapl:"):
            continue
        base = f"{POWERCAP}/{zone}"
        if ctx.sources.read(f"{base}/energy_uj") is None:
            continue
        name = _zone_name(ctx, zone)
        if zone.count(":") > 1:  # a subzone (core, dram) of a package zone
            name = f"{_zone_name(ctx, zone.rsplit(':', 1)[0])}/{name}"
        readable.append(name)
    return readable


def _zone_name(ctx: ProbeContext, zone: str) -> str:
    return (ctx.sources.read(f"{POWERCAP}/{zone}/name") or zone).strip()


@probes.register
class PowerProbe(Probe):
    info = ProbeInfo(name="power", description="power sensors: RAPL domains readable, NVML energy counters", order=40)

    def run(self, ctx: ProbeContext) -> None:
        domains = rapl_domains(ctx)
        nvml_energy = any(d.nvidia is not None and d.nvidia.energy_counter for d in ctx.gpus)
        zones = [z for z in ctx.sources.listdir(POWERCAP) if z.startswith("intel-rapl:")]
        if domains:
            note = None
        elif zones:
            note = "RAPL zones exist but their energy_uj is not readable by this user (root-only since Linux 5.10)"
        else:
            note = "no RAPL powercap zones: CPU energy will be an estimate from TDP x utilisation"
        ctx.power = PowerSensors(
            rapl_readable=bool(domains), rapl_domains=domains, nvml_energy_counter=nvml_energy, note=note
        )
