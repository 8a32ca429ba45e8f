"""Where a training step's time goes on a GPU: forward, backward and the optimizer, and how much of
the step the GPU spent running kernels.

    python -m benchmarks.train_breakdown [--device cuda:0] [--workloads resnet20,...] [--repeats N] [--out FILE.jsonl]

For each zoo workload, precision and batch, the step the torch-eager runtime times (SGD with
momentum, autocast for bf16) taken apart with CUDA events: the forward pass with the loss, forward
and backward, and the whole step. Then one profiled step: the kernels it launched and the time they
ran, against the step's wall time. A step whose kernels fill it is bound by the GPU; one whose kernels
take a small part of it waits on the host launching them (PERFORMANCE.md, "Training on a GPU").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import torch

from app.bench.workloads import get_workload

WORKLOADS = [  # the quick ones first: a run cut short by its time limit has the most configs
    "resnet20",
    "resnet56",
    "mobilenet_v2",
    "resnet18",
    "alexnet",
    "lstm",
    "fcn_s",
    "fcn_r",
    "resnet50",
    "distilbert",
    "bert_base",
]


def timed(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    """Median milliseconds of `repeats` calls after two warm-ups."""
    for _ in range(2):
        fn()
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def kernels(step: Callable[[], object], device: torch.device) -> tuple[int, float, float]:
    """One profiled step: kernels launched, their summed time and the step's wall time (ms)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    torch.cuda.synchronize(device) if device.type == "cuda" else None
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        wall = (time.perf_counter() - start) * 1e3
    launched = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(launched), sum(e.device_time for e in launched) / 1e3, wall


def breakdown(name: str, precision: str, batch: int, device: torch.device, repeats: int) -> dict[str, object]:
    workload = get_workload(name)
    model = workload.make().to(device).train()
    inputs = tuple(x.to(device) for x in workload.inputs(batch))
    targets = workload.targets(batch).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"

    def autocast() -> AbstractContextManager[object]:
        return torch.autocast(device.type, dtype=torch.bfloat16) if precision == "bf16" else nullcontext()

    def forward() -> torch.Tensor:
        with autocast():
            return workload.loss(model(*inputs), targets)

    def forward_backward() -> None:
        optimizer.zero_grad(set_to_none=True)
        forward().backward()

    def step() -> None:
        forward_backward()
        optimizer.step()

    row: dict[str, object] = {"workload": name, "precision": precision, "batch": batch}
    row["forward_ms"] = timed(forward, device, repeats)
    row["forward_backward_ms"] = timed(forward_backward, device, repeats)
    row["step_ms"] = timed(step, device, repeats)
    with torch.inference_mode(), autocast():
        row["infer_ms"] = timed(lambda: model.eval()(*inputs), device, repeats)
    model.train()
    row["kernels"], row["kernel_ms"], row["profiled_wall_ms"] = kernels(step, device)
    return row


def keep(row: dict[str, object], out: Path | None, device: torch.device) -> None:
    """Append ``row`` to ``out`` (JSON lines), if given, and hand the config's memory back."""
    if out:
        with out.open("a") as file:
            file.write(json.dumps(row) + "\n")
    if device.type == "cuda":
        torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--precisions", default="fp32,tf32,bf16")
    parser.add_argument("--batches", default="32,256")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    device = torch.device(args.device)
    print(
        f"{'workload':13} {'prec':5} {'batch':>5} {'infer':>8} {'fwd':>8} {'fwd+bwd':>8} {'step':>8}"
        f" {'kernels':>7} {'busy':>5}  (ms)"
    )
    for name in args.workloads.split(","):
        for precision in args.precisions.split(","):
            for batch in (int(b) for b in args.batches.split(",")):
                try:
                    row = breakdown(name, precision, batch, device, args.repeats)
                except Exception as error:  # one config failing must not end the survey
                    print(f"{name:13} {precision:5} {batch:5} failed: {error}", file=sys.stderr)
                    continue
                busy = float(row["kernel_ms"]) / float(row["profiled_wall_ms"])  # type: ignore[arg-type]
                print(
                    f"{name:13} {precision:5} {batch:5} {row['infer_ms']:8.2f} {row['forward_ms']:8.2f}"
                    f" {row['forward_backward_ms']:8.2f} {row['step_ms']:8.2f} {row['kernels']:7} {busy:5.2f}",
                    flush=True,
                )
                keep(row, args.out, device)


if __name__ == "__main__":
    main()
