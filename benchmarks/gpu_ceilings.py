"""A GPU's measured ceilings against its catalog entry, and NVML's energy counter against power x time.

    python -m benchmarks.gpu_ceilings [--device cuda:0] [--seconds 3]     # on a machine with a GPU

1. The engine's GEMM (8192^3, each precision, and bf16 with B transposed) in TFLOP/s (int8: TOP/s)
   beside the catalog's dense peak for the part the probe matched, and the fraction; the device copy
   and the host<->device copies in GB/s beside the memory bandwidth and PCIe. NVIDIA's dense bf16
   peak is not reached by cuBLAS on random data (an H100 SXM gives about 700 of 989), and a copy
   counts the bytes read and written.
2. The energy check: a bf16 GEMM loop runs for --seconds while a thread samples NVML's power at
   100 Hz; the energy counter's difference over the loop is set against the integral of the samples
   (the goal is within 5%), and against the engine's own result for the same config (its energy per
   step x steps per second = its mean power, set against the sampled mean).
"""

from __future__ import annotations

import argparse
import itertools
import time

import torch

from app.bench.config import BenchConfig
from app.bench.energy import Sampler
from app.bench.runner import run_config
from app.catalog import get as catalog_entry
from app.contracts import MeasureSpec, Precision, Result
from app.probes import probe_machine

GEMMS = (
    ("gemm_8192", Precision.fp32, "peak_fp32_tflops"),
    ("gemm_8192", Precision.tf32, "peak_tf32_tflops"),
    ("gemm_8192", Precision.bf16, "peak_bf16_tflops"),
    ("gemm_8192", Precision.fp16, "peak_fp16_tflops"),
    ("gemm_8192", Precision.int8, "peak_int8_tops"),
    ("gemm_8192_nt", Precision.bf16, "peak_bf16_tflops"),
    ("gemm_8192_nt", Precision.fp16, "peak_fp16_tflops"),
)
COPIES = ("copy_1024mb", "h2d_pinned_256mb", "h2d_pageable_256mb", "d2h_pinned_256mb", "d2h_pageable_256mb")


def ceilings(device: str, seconds: float) -> None:
    machine = probe_machine()
    gpu = machine.device(device)
    assert gpu is not None, f"this machine has no {device}"
    entry = catalog_entry(gpu.catalog_id) if gpu.catalog_id else None
    print(f"{gpu.name} (catalog {gpu.catalog_id}), torch {torch.__version__}")
    measure = MeasureSpec(time_budget_s=seconds, warmup_budget_s=1.0)
    print(f"{'config':<44} {'measured':>10} {'catalog':>9} {'fraction':>8}   mean power")
    for workload, precision, field in GEMMS:
        result = run_config(BenchConfig(workload, None, "torch-eager", device, precision, 1), machine, measure)
        peak = getattr(entry, field, None) if entry else None
        measured = result.achieved_tflops
        if measured is None:
            print(f"{workload + ' ' + precision.value:<44} {result.status.value}: {result.reason}")
            continue
        fraction = f"{measured / peak:>8.2f}" if peak else f"{'-':>8}"
        label = f"{workload} {precision.value}"
        print(f"{label:<44} {measured:>10.1f} {peak or '-':>9} {fraction}   {_watts(result)}")
    for workload in COPIES:
        result = run_config(BenchConfig(workload, None, "torch-eager", device, Precision.fp32, 1), machine, measure)
        peak = entry.memory_bandwidth_gb_s if entry and workload.startswith("copy") else None
        measured = result.bandwidth_gb_per_s
        if measured is None:
            print(f"{workload:<44} {result.status.value}: {result.reason}")
            continue
        fraction = f"{measured / peak:>8.2f}" if peak else f"{'-':>8}"
        print(f"{workload + ' GB/s':<44} {measured:>10.1f} {peak or '-':>9} {fraction}   {_watts(result)}")


def _watts(result: Result) -> str:
    return f"{result.mean_power_w:.0f} W ({result.power_source.value})" if result.mean_power_w is not None else "-"


def energy_check(device: str, seconds: float) -> None:
    import pynvml

    index = torch.device(device).index or 0
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
    samples: list[tuple[float, float]] = []

    def sample() -> None:
        samples.append((time.perf_counter(), pynvml.nvmlDeviceGetPowerUsage(handle) / 1000))

    with Sampler(sample, 0.01):  # the engine's own sampling thread, at 100 Hz
        before, start = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), time.perf_counter()
        steps = 0
        while time.perf_counter() - start < seconds:
            for _ in range(10):
                a @ b
            torch.cuda.synchronize()
            steps += 10
        after, end = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), time.perf_counter()
    counter_j = (after - before) / 1000
    inside = [(t, w) for t, w in samples if start <= t <= end]
    integral_j = sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in itertools.pairwise(inside))
    integral_j *= (end - start) / (inside[-1][0] - inside[0][0])
    sampled_w = sum(w for _, w in inside) / len(inside)
    print(
        f"\nenergy over {end - start:.2f} s of bf16 GEMM ({steps} products, {len(inside)} power samples):\n"
        f"  NVML energy counter  {counter_j:9.1f} J  (mean {counter_j / (end - start):.0f} W)\n"
        f"  power x time         {integral_j:9.1f} J  (mean {sampled_w:.0f} W)\n"
        f"  counter / integral   {counter_j / integral_j:9.3f}"
    )
    machine = probe_machine()
    result = run_config(
        BenchConfig("gemm_8192", None, "torch-eager", device, Precision.bf16, 1),
        machine,
        MeasureSpec(time_budget_s=seconds, warmup_budget_s=1.0),
    )
    print(f"  the engine's result for the same config: {_watts(result)}, against {sampled_w:.0f} W sampled here")
    pynvml.nvmlShutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    ceilings(args.device, args.seconds)
    energy_check(args.device, max(args.seconds, 5.0))


if __name__ == "__main__":
    main()
