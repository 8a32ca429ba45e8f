"""The performance model against DESIGN.md's H100 SXM reference figures (a sanity check, never fitted).

    .venv/bin/python -m benchmarks.design_sanity

DESIGN.md lists what one H100 80GB HBM3 SXM (700 W, torch 2.11 eager) measured for ResNet-50, and a
16-core Sapphire-Rapids-class CPU's ResNet-50 batch 16; this prints what the shipped model predicts for
the same configs from the catalog entries alone (for the CPU, the median over the catalog's 16-core
Sapphire Rapids parts, whose SKU DESIGN does not name), and the ratio. DESIGN's rule: a 2x disagreement
is a bug.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from app.catalog import load
from app.contracts import Precision, Task
from app.perfmodel.predict import predict

PART = "h100-sxm5-80gb"
# (task, precision, batch, DESIGN.md figure, unit): throughput in samples/s, or batch-1 latency in ms
REFERENCE = (
    (Task.infer, Precision.fp32, 256, 3560.0, "/s"),
    (Task.infer, Precision.tf32, 256, 6221.0, "/s"),
    (Task.infer, Precision.bf16, 256, 9069.0, "/s"),
    (Task.infer, Precision.fp32, 1, 5.4, "ms"),
    (Task.infer, Precision.bf16, 1, 8.4, "ms"),
    (Task.train, Precision.fp32, 256, 992.0, "/s"),
    (Task.train, Precision.tf32, 256, 1859.0, "/s"),
    (Task.train, Precision.bf16, 256, 2242.0, "/s"),
)

# (runtime, threads, DESIGN.md figure in samples/s) for ResNet-50 fp32 inference at batch 16
CPU_REFERENCE = (("torch-eager", 1, 6.0), ("torch-eager", 16, 56.0), ("onnxruntime-cpu", 16, 138.0))


def cpu(out: Callable[[str], None] = print) -> None:
    parts = [h for h in load() if h.kind == "cpu" and h.architecture == "Sapphire Rapids" and h.cores == 16]
    out("")
    title = f"resnet50 infer fp32 batch 16, 16-core Sapphire Rapids ({len(parts)} parts)"
    out(f"| {title} | DESIGN.md | model | model / DESIGN |")
    out("|---|---|---|---|")
    for runtime, threads, figure in CPU_REFERENCE:
        found = [
            p.throughput
            for part in parts
            if (p := predict("resnet50", Task.infer, Precision.fp32, 16, part, runtime=runtime, threads=threads))
        ]
        value = statistics.median(found)
        out(f"| {runtime} threads {threads} | {figure:,.1f} /s | {value:,.1f} /s | {value / figure:.2f} |")


def main(out: Callable[[str], None] = print) -> None:
    hardware = next(h for h in load() if h.id == PART)
    out(f"| resnet50 on {PART} | DESIGN.md | model | model / DESIGN |")
    out("|---|---|---|---|")
    for task, precision, batch, figure, unit in REFERENCE:
        found = predict("resnet50", task, precision, batch, hardware, runtime="torch-eager")
        if found is None:
            out(f"| {task.value} {precision.value} batch {batch} | {figure:,.1f} {unit} | - | - |")
            continue
        value = found.breakdown.seconds * 1000 if unit == "ms" else found.throughput
        ratio = figure / value if unit == "ms" else value / figure
        config = f"{task.value} {precision.value} batch {batch}"
        out(f"| {config} | {figure:,.1f} {unit} | {value:,.1f} {unit} | {ratio:.2f} |")
    cpu(out)


if __name__ == "__main__":
    main()
