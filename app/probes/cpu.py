"""CPU: identity, topology, caches, the ISA features deep learning uses, and the effective CPU count."""

from __future__ import annotations

import math
import re

from app.contracts import CpuInfo
from app.probes.base import Probe, ProbeContext, ProbeInfo, probes
from app.probes.sources import Sources

DL_FEATURES_X86 = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_bf16",
    "avx512_fp16",
    "avx512_vnni",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
)
DL_FEATURES_ARM = ("asimd", "asimddp", "asimdhp", "fphp", "sve", "sve2", "bf16", "svebf16", "i8mm", "svei8mm", "sme")


def parse_lscpu(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def parse_cpuinfo(text: str) -> dict[str, str]:
    """The first processor block of /proc/cpuinfo, keys lower-cased."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    return fields


_SIZE = re.compile(r"([\d.]+)\s*([KMG]i?B?)?", re.IGNORECASE)


def size_kib(text: str | None) -> int | None:
    """'32 MiB (16 instances)' -> 32768; lscpu gives the total over all instances."""
    if not text:
        return None
    match = _SIZE.match(text.strip())
    if not match:
        return None
    number = float(match.group(1))
    unit = (match.group(2) or "K").upper()[0]
    return round(number * {"K": 1, "M": 1024, "G": 1024 * 1024}[unit])


def _int(text: str | None) -> int | None:
    try:
        return int(text, 0) if text else None
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def count_cpu_list(text: str) -> int:
    """'0-3,8,10-11' -> 7."""
    total = 0
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        total += int(high or low) - int(low) + 1
    return total


def _cgroup_quota_v2(sources: Sources) -> tuple[float | None, str | None]:
    """The tightest cpu.max on this process's cgroup path (v2), walking up to the root."""
    own = sources.read("/proc/self/cgroup") or ""
    paths = [line.split("::", 1)[1] for line in own.splitlines() if line.startswith("0::")]
    path = paths[0].strip() if paths else "/"
    best: float | None = None
    where: str | None = None
    while True:
        text = sources.read(f"/sys/fs/cgroup{path.rstrip('/')}/cpu.max")
        parts = (text or "").split()
        if parts and parts[0] != "max":
            period = float(parts[1]) if len(parts) > 1 else 100_000.0
            cpus = float(parts[0]) / period
            if best is None or cpus < best:
                best, where = cpus, f"cgroup v2 cpu.max at {path or '/'}: {' '.join(parts)}"
        if path in ("", "/"):
            break
        path = path.rsplit("/", 1)[0] or "/"
    return best, where


def _cgroup_quota_v1(sources: Sources) -> tuple[float | None, str | None]:
    for base in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"):
        quota = _int((sources.read(f"{base}/cpu.cfs_quota_us") or "").strip())
        period = _int((sources.read(f"{base}/cpu.cfs_period_us") or "").strip())
        if quota is not None and period and quota > 0:
            return quota / period, f"cgroup v1 cpu.cfs_quota_us={quota} cpu.cfs_period_us={period}"
    return None, None


def _cpuset(sources: Sources) -> tuple[int | None, str | None]:
    for path in ("/sys/fs/cgroup/cpuset.cpus.effective", "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"):
        text = (sources.read(path) or "").strip()
        if text:
            return count_cpu_list(text), f"cpuset {text}"
    return None, None


def effective_cpus(sources: Sources, logical: int) -> tuple[float, str | None]:
    """min(logical CPUs, scheduler affinity, cpuset, CFS quota), with the limit that bound it."""
    candidates: list[tuple[float, str | None]] = [(float(logical), None)]
    affinity = sources.affinity()
    if affinity:
        candidates.append((float(affinity), f"scheduler affinity allows {affinity} CPUs"))
    for value, why in (_cpuset(sources), _cgroup_quota_v2(sources), _cgroup_quota_v1(sources)):
        if value is not None:
            candidates.append((float(value), why))
    value, why = min(candidates, key=lambda c: c[0])
    return round(value, 3), why


def _base_mhz(sources: Sources, model_name: str) -> float | None:
    khz = _float((sources.read("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency") or "").strip())
    if khz:
        return khz / 1000
    match = re.search(r"@\s*([\d.]+)\s*GHz", model_name)
    return float(match.group(1)) * 1000 if match else None


def _numa_nodes(sources: Sources, fields: dict[str, str]) -> int:
    nodes = _int(fields.get("NUMA node(s)"))
    if nodes:
        return nodes
    listed = [n for n in sources.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", n)]
    return max(1, len(listed))


def read_cpu(sources: Sources) -> CpuInfo:
    lscpu = parse_lscpu(sources.command("lscpu") or "")
    cpuinfo = parse_cpuinfo(sources.read("/proc/cpuinfo") or "")
    if not lscpu and not cpuinfo:
        raise RuntimeError("neither lscpu nor /proc/cpuinfo could be read")
    arch = lscpu.get("Architecture") or sources.machine()
    model_name = lscpu.get("Model name") or cpuinfo.get("model name") or cpuinfo.get("hardware") or "unknown CPU"
    logical = _int(lscpu.get("CPU(s)")) or max(1, (sources.read("/proc/cpuinfo") or "").count("processor\t:"))
    threads_per_core = _int(lscpu.get("Thread(s) per core")) or 1
    sockets = _int(lscpu.get("Socket(s)")) or _int(lscpu.get("Cluster(s)")) or 1
    cores_per_socket = _int(lscpu.get("Core(s) per socket")) or _int(lscpu.get("Core(s) per cluster"))
    physical = sockets * cores_per_socket if cores_per_socket else max(1, logical // threads_per_core)
    flags = set((lscpu.get("Flags") or cpuinfo.get("flags") or cpuinfo.get("features") or "").split())
    wanted = DL_FEATURES_ARM if arch.startswith(("aarch64", "arm")) else DL_FEATURES_X86
    effective, why = effective_cpus(sources, logical)
    max_mhz = _float(lscpu.get("CPU max MHz"))
    return CpuInfo(
        arch=arch,
        vendor=lscpu.get("Vendor ID") or cpuinfo.get("vendor_id") or None,
        model_name=model_name,
        family=_int(lscpu.get("CPU family") or cpuinfo.get("cpu family")),
        model=_int(lscpu.get("Model") or cpuinfo.get("model")),
        stepping=_int(lscpu.get("Stepping") or cpuinfo.get("stepping")),
        sockets=sockets,
        physical_cores=physical,
        logical_cores=logical,
        threads_per_core=threads_per_core,
        base_mhz=_base_mhz(sources, model_name),
        max_mhz=max_mhz if max_mhz and not math.isnan(max_mhz) else None,
        l1d_kib=size_kib(lscpu.get("L1d cache") or lscpu.get("L1d")),
        l2_kib=size_kib(lscpu.get("L2 cache") or lscpu.get("L2")),
        l3_kib=size_kib(lscpu.get("L3 cache") or lscpu.get("L3")),
        numa_nodes=_numa_nodes(sources, lscpu),
        isa_features=[f for f in wanted if f in flags],
        hypervisor=lscpu.get("Hypervisor vendor") or ("unknown" if "hypervisor" in flags else None),
        effective_cpus=effective,
        effective_cpus_reason=why,
    )


@probes.register
class CpuProbe(Probe):
    info = ProbeInfo(
        name="cpu",
        description="CPU identity, topology, caches, ISA features, hypervisor, effective CPUs (cgroup, cpuset)",
        order=10,
    )

    def run(self, ctx: ProbeContext) -> None:
        ctx.cpu = read_cpu(ctx.sources)
