"""The CPU probe on captured machines: a real H100 host, a 2-socket AMX Xeon, an Arm server, a container."""

from __future__ import annotations

from app.probes import probe_machine
from app.probes.cpu import count_cpu_list, read_cpu, size_kib
from app.probes.sources import FixtureSources
from testkit import MACHINES


def test_h100_host_cpu_is_read_from_its_lscpu() -> None:
    cpu = read_cpu(FixtureSources(MACHINES / "h100"))
    assert (cpu.vendor, cpu.family, cpu.model, cpu.stepping) == ("GenuineIntel", 6, 207, 2)
    assert (cpu.sockets, cpu.physical_cores, cpu.logical_cores, cpu.threads_per_core) == (1, 16, 16, 1)
    assert (cpu.l1d_kib, cpu.l2_kib, cpu.l3_kib) == (768, 32 * 1024, 300 * 1024)
    assert {"avx512f", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8", "avx_vnni"} <= set(cpu.isa_features)
    assert cpu.hypervisor == "KVM"
    assert cpu.effective_cpus == 16


def test_dual_socket_xeon_with_amx() -> None:
    cpu = read_cpu(FixtureSources(MACHINES / "xeon-8480-2s"))
    assert cpu.model_name == "Intel(R) Xeon(R) Platinum 8480+"
    assert (cpu.sockets, cpu.physical_cores, cpu.logical_cores, cpu.threads_per_core) == (2, 112, 224, 2)
    assert cpu.numa_nodes == 2
    assert cpu.base_mhz == 2000 and cpu.max_mhz == 3800
    assert {"amx_tile", "amx_bf16", "amx_int8", "avx512_bf16", "avx512_vnni"} <= set(cpu.isa_features)
    assert cpu.hypervisor is None
    assert cpu.l3_kib == 210 * 1024


def test_arm_server_reports_arm_features() -> None:
    cpu = read_cpu(FixtureSources(MACHINES / "graviton3"))
    assert cpu.arch == "aarch64" and cpu.model_name == "Neoverse-V1"
    assert (cpu.physical_cores, cpu.logical_cores) == (64, 64)
    assert {"asimd", "sve", "bf16", "i8mm"} <= set(cpu.isa_features)
    assert not {"avx2", "avx512f"} & set(cpu.isa_features)
    assert cpu.stepping is None  # "r1p1" is not a number; it is not made into one


def test_container_limited_to_one_and_a_half_cpus_says_so() -> None:
    cpu = read_cpu(FixtureSources(MACHINES / "container-1.5cpu"))
    assert cpu.logical_cores == 128
    assert cpu.effective_cpus == 1.5
    assert cpu.effective_cpus_reason is not None and "cpu.max" in cpu.effective_cpus_reason


def test_nothing_readable_still_gives_a_valid_spec_with_the_reasons() -> None:
    spec = probe_machine(FixtureSources(MACHINES / "unreadable"), nvml=_no_driver())
    failed = {e.probe: e.reason for e in spec.probe_errors}
    assert "lscpu" in failed["cpu"] and "memory" in failed and "software" in failed and "nvidia" in failed
    assert spec.cpu.model_name == "unknown CPU"
    assert [d.id for d in spec.devices] == ["cpu"]


def _no_driver():  # type: ignore[no-untyped-def]
    from testkit.nvml import NVML_ERROR_DRIVER_NOT_LOADED, ReplayNvml

    return ReplayNvml([], init_error=NVML_ERROR_DRIVER_NOT_LOADED)


def test_cpu_list_and_cache_size_parsing() -> None:
    assert count_cpu_list("0-3,8,10-11") == 7
    assert count_cpu_list("0") == 1
    assert size_kib("5.3 MiB (112 instances)") == 5427
    assert size_kib("768 KiB (16 instances)") == 768
    assert size_kib("1 GiB") == 1024 * 1024
    assert size_kib(None) is None
