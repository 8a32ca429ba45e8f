"""Build app/perfmodel/data/profiles.json: the profile of every zoo workload x task x precision.

Run from the repository root:  python scripts/build_profiles.py [--out FILE] [--only NAME ...]

Each profile is recorded by app/bench/profiling.py on fake tensors (no GPU, seconds per profile)
and cached under the model cache (``HWADVISOR_CACHE_DIR``, default ``$XDG_CACHE_HOME/hwadvisor``),
keyed by the workload (its module's source, parameter and FLOP counts, sample shape), the task,
the precision, the batches, the torch version and the profiler's own source: a rebuild profiles
only what changed. The output is reproducible: profiles sorted, keys sorted, floats rounded. A profile
this machine cannot record as a GPU runs it (GNMT's LSTM layers at bf16 on a CPU without bf16
support) is kept as the repository ships it, and the build says so.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import time
from pathlib import Path
from typing import Any

import torch

from app.bench import profiling
from app.bench.cache import cache_root
from app.bench.workloads import Workload, get_workload, workloads
from app.contracts import Precision, Task
from app.perfmodel import operators, profile
from app.perfmodel.profile import Profile, ProfileSet

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "app" / "perfmodel" / "data" / "profiles.json"
SIGNIFICANT_DIGITS = 6
PROFILER_SOURCES = (profiling, operators, profile)


def combinations(workload: Workload) -> list[tuple[Task, Precision]]:
    """Every task x precision the workload declares that has a profile (app.perfmodel.profile.profiled)."""
    return [
        (Task(task), Precision(precision))
        for task in workload.info.tasks
        for precision in workload.info.precisions
        if profile.profiled(Task(task), Precision(precision))
    ]


def cache_key(workload: Workload, task: Task, precision: Precision) -> str:
    facts = {
        "workload": workload.info.name,
        "workload_source": _source_hash(type(workload)),
        "parameters": workload.info.parameters,
        "flops_per_sample": workload.info.flops_per_sample,
        "shape": workload.sample_shape(),
        "task": task.value,
        "precision": precision.value,
        "batches": profiling.DEFAULT_BATCHES,
        "torch": torch.__version__,
        "profiler": [_source_hash(module) for module in PROFILER_SOURCES],
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:24]


def _source_hash(thing: Any) -> str:
    return hashlib.sha256(inspect.getsource(inspect.getmodule(thing) or thing).encode()).hexdigest()[:16]


def profile_cached(workload: Workload, task: Task, precision: Precision, cache: Path) -> tuple[Profile, bool]:
    """The profile and whether it came from the cache."""
    path = cache / f"{workload.info.name}-{task.value}-{precision.value}-{cache_key(workload, task, precision)}.json"
    if path.is_file():
        return Profile.model_validate_json(path.read_text(encoding="utf-8")), True
    made = profiling.profile(workload, task, precision)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(made.model_dump_json(), encoding="utf-8")
    tmp.replace(path)
    return made, False


def rounded(value: Any) -> Any:
    """Floats to SIGNIFICANT_DIGITS (whole numbers as ints), recursively: a stable, compact file."""
    if isinstance(value, float):
        if value == 0:
            return 0
        digits = SIGNIFICANT_DIGITS - 1 - int(f"{abs(value):e}".split("e")[1])
        result = round(value, digits)
        return int(result) if result == int(result) else result
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


def shipped() -> dict[tuple[str, Task, Precision], Profile]:
    """The profiles the repository ships (OUT), by workload, task and precision; none if it has no file."""
    if not OUT.is_file():
        return {}
    found = ProfileSet.model_validate_json(OUT.read_text(encoding="utf-8"))
    return {(p.workload, p.task, p.precision): p for p in found.profiles}


def build(out: Path, only: list[str] | None = None) -> tuple[int, int]:
    """Writes the file; returns (profiles written, profiles recorded anew).

    A profile this machine's torch cannot record as a GPU runs it (profiling.NotRecordableHere: a
    recurrent layer at bf16 on a CPU without bf16 instructions runs step by step) is kept as shipped,
    and said so; with none shipped, the build stops."""
    cache = cache_root() / "profiles"
    names = sorted(only or workloads.names())
    made: list[Profile] = []
    fresh = 0
    kept: dict[tuple[str, Task, Precision], Profile] | None = None
    for name in names:
        workload = get_workload(name)
        for task, precision in combinations(workload):
            started = time.perf_counter()
            try:
                found, cached = profile_cached(workload, task, precision, cache)
                how = "cached" if cached else f"{time.perf_counter() - started:.1f} s"
            except profiling.NotRecordableHere as exc:
                kept = shipped() if kept is None else kept
                if (name, task, precision) not in kept:
                    raise
                found, cached, how = kept[name, task, precision], True, f"kept as shipped: {exc}"
            fresh += not cached
            made.append(found)
            print(f"{name} {task.value} {precision.value}: {len(found.buckets)} buckets ({how})", flush=True)
    profiles = ProfileSet(profiles=sorted(made, key=lambda p: (p.workload, p.task.value, p.precision.value)))
    data = rounded(profiles.model_dump(mode="json"))
    for entry in data["profiles"]:  # only a language model's profile has a KV cache: the others stay as they were
        if not any(entry["memory"]["kv_cache"].values()):
            del entry["memory"]["kv_cache"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    return len(made), fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", help="these workloads only (the file then holds only them)")
    args = parser.parse_args()
    started = time.perf_counter()
    count, fresh = build(args.out, args.only)
    elapsed = time.perf_counter() - started
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({count} profiles, {fresh} recorded anew, {size / 1e6:.2f} MB) in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
