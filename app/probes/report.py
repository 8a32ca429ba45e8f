"""A MachineSpec as a readable table for people (`hwadvisor probe`)."""

from __future__ import annotations

from app.contracts import MachineSpec


def _row(label: str, value: object) -> str:
    return f"  {label:<22} {value}"


def _optional(value: object, unit: str = "") -> str:
    return "-" if value is None else f"{value}{unit}"


def render_spec(spec: MachineSpec) -> str:
    cpu, mem, sw = spec.cpu, spec.memory, spec.software
    lines = [f"machine {spec.hostname}  (fingerprint {spec.fingerprint})", "cpu"]
    lines += [
        _row("model", f"{cpu.model_name} ({cpu.vendor or '?'}, family {cpu.family} model {cpu.model})"),
        _row(
            "topology",
            f"{cpu.sockets} socket(s), {cpu.physical_cores} cores, {cpu.logical_cores} threads,"
            f" {cpu.numa_nodes} NUMA node(s)",
        ),
        _row(
            "effective cpus",
            f"{cpu.effective_cpus:g}" + (f"  ({cpu.effective_cpus_reason})" if cpu.effective_cpus_reason else ""),
        ),
        _row("clock", f"base {_optional(cpu.base_mhz, ' MHz')}, max {_optional(cpu.max_mhz, ' MHz')}"),
        _row(
            "caches",
            f"L1d {_optional(cpu.l1d_kib, ' KiB')}, L2 {_optional(cpu.l2_kib, ' KiB')},"
            f" L3 {_optional(cpu.l3_kib, ' KiB')}",
        ),
        _row("isa", " ".join(cpu.isa_features) or "-"),
        _row("hypervisor", _optional(cpu.hypervisor)),
        "memory",
        _row(
            "total / available",
            f"{mem.total_mb / 1024:.1f} / {mem.available_mb / 1024:.1f} GiB, swap {mem.swap_total_mb / 1024:.1f} GiB",
        ),
        "devices",
    ]
    for device in spec.devices:
        catalog = device.catalog_id or f"no catalog match: {device.catalog_note}"
        lines.append(_row(device.id, f"{device.name}  [{catalog}]"))
        nv = device.nvidia
        if nv is not None:
            lines.append(
                _row(
                    "",
                    f"cc {_optional(nv.compute_capability)}, {_optional(nv.sm_count)} SMs,"
                    f" {_optional(device.memory_total_mb, ' MiB')}, power limit"
                    f" {_optional(nv.power_limit_w, ' W')}"
                    f" ({_optional(nv.power_limit_min_w)}-{_optional(nv.power_limit_max_w)} W),"
                    f" PCIe gen {_optional(nv.pcie_cur_gen)} x{_optional(nv.pcie_cur_width)}",
                )
            )
    lines += [
        "software",
        _row("os", f"{sw.os} (kernel {_optional(sw.kernel)}), python {sw.python}"),
        *(_row(name, value) for name, value in sorted(sw.libraries.items())),
        "power sensors",
        _row("rapl", ", ".join(spec.power_sensors.rapl_domains) or "not readable"),
        _row("nvml energy counter", "yes" if spec.power_sensors.nvml_energy_counter else "no"),
    ]
    if spec.power_sensors.note:
        lines.append(_row("", spec.power_sensors.note))
    if spec.probe_errors:
        lines.append("probe errors")
        lines += [_row(e.probe, e.reason) for e in spec.probe_errors]
    return "\n".join(lines)
