"""What an inference step launches on a GPU, kernel by kernel: where a batch-1 step's time goes.

    python -m benchmarks.infer_kernels [--device cuda:0] [--workloads resnet50,...] [--batches 1,256] [--out FILE.jsonl]

For each zoo workload, precision and batch, the inference step the torch-eager runtime times
(eval, inference_mode, autocast for bf16, tf32 switched per config): its median wall time, then one
profiled step's kernels grouped by name, with their count and the time they ran. The step's kernels
against its wall time say whether the GPU or the host launching them bounds it; the groups say what
a precision adds (autocast's casts, layout transposes, other convolution algorithms), which the
performance model's profiles (app/bench/profiling.py) must then account for.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import torch

from app.bench.workloads import get_workload
from benchmarks.train_breakdown import keep, timed

TEMPLATE = re.compile(r"<.*>|\(.*\)")


def kernel_groups(step: Callable[[], object], device: torch.device) -> tuple[dict[str, tuple[int, float]], float]:
    """One profiled step: per kernel name (templates dropped), launches and summed microseconds; and
    the step's wall microseconds."""
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    if cuda:
        torch.cuda.synchronize(device)
    with profile(activities=activities) as prof:
        step()
        if cuda:
            torch.cuda.synchronize(device)
    groups: dict[str, list[float]] = defaultdict(list)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            groups[TEMPLATE.sub("", event.name)[:90]].append(event.device_time)
    span = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU]
    wall = (max(e.time_range.end for e in span) - min(e.time_range.start for e in span)) if span else 0.0
    return {name: (len(times), sum(times)) for name, times in groups.items()}, wall


def survey(name: str, precision: str, batch: int, device: torch.device, repeats: int) -> dict[str, object]:
    workload = get_workload(name)
    model = workload.make().to(device).eval()
    inputs = tuple(x.to(device) for x in workload.inputs(batch))
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"

    def autocast() -> AbstractContextManager[object]:
        return torch.autocast(device.type, dtype=torch.bfloat16) if precision == "bf16" else nullcontext()

    def step() -> object:
        with torch.inference_mode(), autocast():
            return model(*inputs)

    wall_ms = timed(step, device, repeats)
    groups, profiled_us = kernel_groups(step, device)
    return {
        "workload": name,
        "precision": precision,
        "batch": batch,
        "wall_ms": wall_ms,
        "profiled_wall_us": profiled_us,
        "kernels": sum(n for n, _ in groups.values()),
        "kernel_us": sum(t for _, t in groups.values()),
        "groups": sorted(([k, n, t] for k, (n, t) in groups.items()), key=lambda g: -g[2]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--workloads", default="resnet50,resnet18,mobilenet_v2,bert_base")
    parser.add_argument("--precisions", default="fp32,tf32,bf16")
    parser.add_argument("--batches", default="1,256")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    device = torch.device(args.device)
    for name in args.workloads.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            for precision in args.precisions.split(","):
                row = survey(name, precision, batch, device, args.repeats)
                running, profiled = float(row["kernel_us"]) / 1e3, float(row["profiled_wall_us"]) / 1e3  # type: ignore[arg-type]
                print(
                    f"{name} {precision} batch {batch}: {row['wall_ms']:.3f} ms wall, {row['kernels']} kernels"
                    f" running {running:.3f} ms (profiled step {profiled:.3f} ms)",
                    flush=True,
                )
                for kernel, count, us in row["groups"][: args.top]:  # type: ignore[index]
                    print(f"    {count:4} x {us / count:8.2f} us  {kernel}")
                keep(row, args.out, device)


if __name__ == "__main__":
    main()
