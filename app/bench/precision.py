"""Which precisions a device can run, and why not: never run silently in another precision."""

from __future__ import annotations

from app.contracts import CpuInfo, Device, Precision

CPU_BF16_FEATURES = {"avx512_bf16", "amx_bf16", "bf16", "svebf16"}
CPU_FP16_FEATURES = {"avx512_fp16", "amx_fp16", "asimdhp"}


def cpu_unsupported(precision: Precision, cpu: CpuInfo) -> str | None:
    """None when the CPU has native support for the precision's arithmetic; else the reason."""
    features = set(cpu.isa_features)
    if precision is Precision.tf32:
        return "tf32 is a tensor-core format of NVIDIA GPUs (Ampere and later); CPUs have none"
    if precision is Precision.bf16 and not features & CPU_BF16_FEATURES:
        return f"this CPU ({cpu.model_name}) has no bf16 instructions (avx512_bf16, amx_bf16 or Arm bf16)"
    if precision is Precision.fp16 and not features & CPU_FP16_FEATURES:
        return f"this CPU ({cpu.model_name}) has no fp16 arithmetic (avx512_fp16, amx_fp16 or Arm fp16)"
    return None


def cuda_unsupported(precision: Precision, device: Device) -> str | None:
    capability = device.nvidia.compute_capability if device.nvidia else None
    major = int(capability.split(".")[0]) if capability else None
    if precision in (Precision.tf32, Precision.bf16) and major is not None and major < 8:
        return f"{precision.value} needs compute capability 8.0 or later; {device.name} has {capability}"
    return None
