"""Reference runs: machines hwadvisor measured itself with its own agent path, shipped with the package.

Each file in app/catalog/data/reference/ is one machine (a ReferenceRun: its spec, its software, every
result and how it was measured; scripts/build_reference.py writes it from the machine's database
export). Its settled results of models stand beside the published ones under their own source,
``reference:hwadvisor-<catalog id>``: the recommender shows them as measured on their part, labelled
with that source, and calibrates the model with them for the other parts of its vendor, as a lab
device's measurements do (app/recommender/estimators/modelled.py). Primitives (GEMM, copies) and
language models' prefill and decode stay in the file, not in the rows.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from app.contracts import PowerSource, PublicResult, ReferenceResult, ReferenceRun, Task

MODEL_TASKS = (Task.infer, Task.train)


@lru_cache(maxsize=1)
def shipped() -> tuple[ReferenceRun, ...]:
    folder = resources.files("app.catalog").joinpath("data/reference")
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)
    return tuple(ReferenceRun.model_validate_json(f.read_text(encoding="utf-8")) for f in files)


def settled_models(run: ReferenceRun) -> list[ReferenceResult]:
    """The run's settled model results (inference and training) that measured a throughput."""
    return [e for e in run.results if e.settled and e.result.task in MODEL_TASKS and e.result.throughput_samples_per_s]


def as_published(run: ReferenceRun) -> list[PublicResult]:
    """The run's settled, successful model results as rows beside the published ones."""
    gpu = run.machine.device(run.device)
    name = gpu.name if gpu is not None else run.hardware_id
    torch = run.machine.software.libraries.get("torch", "?")
    cuda = run.machine.software.libraries.get("torch.cuda", "?")
    rows = []
    for entry in settled_models(run):
        r = entry.result
        rows.append(
            PublicResult(
                source=run.source,
                hardware_id=run.hardware_id,
                hardware_name=name,
                workload=r.workload,
                task=r.task,
                runtime=r.runtime,
                precision=r.precision,
                batch_size=r.batch_size,
                throughput_samples_per_s=r.throughput_samples_per_s,
                latency_p99_ms=r.latency_p99_ms or None,
                mean_power_w=r.mean_power_w if r.power_source is PowerSource.nvml and r.mean_power_w else None,
                note=f"hwadvisor reference run of {run.captured} on an {name} (torch {torch}, CUDA {cuda}), "
                f"run {entry.run[:8]}, {r.iterations} timed steps",
            )
        )
    return rows


def published_rows() -> tuple[PublicResult, ...]:
    return tuple(row for run in shipped() for row in as_published(run))
