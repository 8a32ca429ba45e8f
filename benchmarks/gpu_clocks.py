"""How a GPU's speed moves over the first seconds of work, and how often its energy counter steps.

    python -m benchmarks.gpu_clocks [--device cuda:0]     # on a machine with an NVIDIA GPU

Why the engine warms a GPU up for at least a second and samples it for at least a second
(app/bench/measure.py, GPU_WARMUP_MIN_S and GPU_SAMPLING_MIN_S), and why its NVML meter reads the
counter's steps rather than two values of it (app/bench/energy/nvml.py). After three idle seconds:

1. a bf16 8192^3 GEMM for 6 s: per quarter second, the time per product, the SM clock and the power
   NVML reports; a thread reads the energy counter every millisecond and the gaps between its steps
   are printed;
2. ResNet-50 inference at batch 1 in fp32 for 1.5 s: per tenth of a second, the time per step (each
   between CUDA events after draining the queue, as the engine times it) and the SM clock.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from app.bench.energy import Sampler
from app.bench.workloads import get_workload


class Watch:
    """NVML read on the engine's sampling thread: the counter every millisecond (its steps kept), and
    (time, SM clock MHz, power W) every 5 ms."""

    def __init__(self, index: int) -> None:
        import pynvml

        self.nvml = pynvml
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.readings: list[tuple[float, int, float]] = []
        self.steps: list[tuple[float, int]] = []
        self._next_reading = 0.0
        self._sampler = Sampler(self._read, 0.001)

    def _read(self) -> None:
        now = time.perf_counter()
        energy = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
        if not self.steps or energy != self.steps[-1][1]:
            self.steps.append((now, energy))
        if now >= self._next_reading:
            clock = self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM)
            power = self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000
            self.readings.append((now, clock, power))
            self._next_reading = now + 0.005

    def __enter__(self) -> Watch:
        self._sampler.__enter__()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._sampler.__exit__()

    def between(self, start: float, end: float) -> tuple[float, float]:
        inside = [(c, p) for t, c, p in self.readings if start <= t < end] or [(0, 0.0)]
        return statistics.fmean(c for c, _ in inside), statistics.fmean(p for _, p in inside)


def timed_steps(step: Callable[[], object], seconds: float, per_event: int) -> list[tuple[float, float]]:
    """(wall time at the end, seconds per step) for groups of ``per_event`` steps, for ``seconds``."""
    out = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        torch.cuda.synchronize()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(per_event):
            step()
        end.record()
        end.synchronize()
        out.append((time.perf_counter(), begin.elapsed_time(end) / 1000 / per_event))
    return out


def table(title: str, watch: Watch, times: list[tuple[float, float]], start: float, bucket: float, unit: str) -> None:
    print(f"\n{title}\n{'from s':>7} {unit:>12} {'SM MHz':>7} {'power W':>8}")
    end = times[-1][0]
    t = start
    while t < end:
        inside = [s for w, s in times if t <= w < t + bucket]
        if inside:
            clock, power = watch.between(t, t + bucket)
            print(f"{t - start:>7.2f} {statistics.median(inside) * 1000:>12.3f} {clock:>7.0f} {power:>8.0f}")
        t += bucket


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    device = torch.device(args.device)
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    workload = get_workload("resnet50")
    model = workload.make().to(device).eval()
    inputs = tuple(x.to(device) for x in workload.inputs(1))

    def infer() -> object:
        with torch.inference_mode():
            return model(*inputs)

    infer()
    with Watch(device.index or 0) as watch:
        time.sleep(3)
        start = time.perf_counter()
        gemm = timed_steps(lambda: a @ b, 6.0, 20)
        table("bf16 GEMM 8192^3 from idle", watch, gemm, start, 0.25, "ms/product")
        gaps = [t1 - t0 for (t0, _), (t1, _) in zip(watch.steps, watch.steps[1:], strict=False) if t0 >= start]
        if gaps:
            print(
                f"energy counter: {len(gaps)} steps in the GEMM's {gemm[-1][0] - start:.1f} s, gaps median "
                f"{statistics.median(gaps) * 1000:.0f} ms, min {min(gaps) * 1000:.0f}, max {max(gaps) * 1000:.0f}"
            )
        time.sleep(3)
        start = time.perf_counter()
        steps = timed_steps(infer, 1.5, 1)
        table("ResNet-50 fp32 batch 1 from idle", watch, steps, start, 0.1, "ms/step")
    watch.nvml.nvmlShutdown()


if __name__ == "__main__":
    main()
