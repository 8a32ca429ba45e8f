"""What no machine can run, known from the plug-in registries alone: a workload, runtime or variant no
plug-in has, a task or precision the workload lacks, a runtime asked for a task or a kind of device it does
not run. An agent records such a config ``unsupported`` (app/bench/runner.py: with these words, but where a
runtime words its own tasks or kinds of device), after it has claimed the job; the server says the same
when the job is queued (``suite_notes``), so that a typo or an OpenVINO training row is seen at once rather
than in a run's results hours later. The suite is never refused for it: an agent newer than the server may
have a plug-in the server lacks.

Reads the registries' metadata only: no torch, no runtime imported.
"""

from __future__ import annotations

import itertools

from app.bench.primitives.base import primitives
from app.bench.runtimes.base import runtimes
from app.bench.variants.base import variants
from app.bench.workloads.base import workloads
from app.contracts import ORIGINAL, TEXT_MAX, Precision, SuiteSpec, Task

NOTES_MAX = 20
"""The most reasons a job's notes list."""


def unknown_workload(workload: str) -> str | None:
    if workload in workloads or workload in primitives:
        return None
    return f"unknown workload {workload!r}; known: {', '.join(workloads.names() + primitives.names())}"


def unknown_runtime(runtime: str) -> str | None:
    if runtime in runtimes:
        return None
    return f"unknown runtime {runtime!r}; known: {', '.join(runtimes.names())}"


def unknown_variant(variant: str | None) -> str | None:
    if variant is None or variant in variants:
        return None
    return f"unknown variant {variant!r}; known: none (the original model), {', '.join(variants.names())}"


def workload_unsupported(workload: str, task: Task | None, precision: Precision) -> str | None:
    """A task or precision the workload does not have: a language model has prefill, decode and
    train, not infer; a classifier has no prefill."""
    info = workloads.get(workload).info
    if task is not None and (untasked := workload_untasked(workload, task)) is not None:
        return untasked
    if precision.value not in info.precisions:
        return f"{workload} is measured in {', '.join(info.precisions)}, not {precision.value}"
    return None


def workload_untasked(workload: str, task: Task) -> str | None:
    """A task the zoo workload ``workload`` does not have (BERT-base neither prefills nor decodes)."""
    tasks = workloads.get(workload).info.tasks
    return None if task.value in tasks else f"{workload} has tasks {', '.join(tasks)}, not {task.value}"


def task_unrun(runtime: str, task: Task | None) -> str | None:
    """A task the runtime does not run (OpenVINO and TensorFlow Lite run inference only)."""
    tasks = runtimes.get(runtime).info.tasks
    if task is not None and task.value not in tasks:
        return f"{runtime} runs {', '.join(tasks)}, not {task.value}"
    return None


def device_unrun(runtime: str, device: str) -> str | None:
    """The kind of a suite's ``device`` (``cpu``, ``cuda:0``) where the runtime does not run on it."""
    return kind_unrun(runtime, "cpu" if device == "cpu" else "cuda")


def kind_unrun(runtime: str, kind: str) -> str | None:
    """A kind of device (``cpu``, ``cuda``) the runtime does not run on (OpenVINO's plug-in on a GPU)."""
    devices = runtimes.get(runtime).info.devices
    if kind in devices:
        return None
    return f"{runtime} runs on {' and '.join(devices)} devices only, not {kind}"


def suite_notes(suite: SuiteSpec) -> list[str]:
    """What no machine can run in ``suite``, each reason once, in the grid's order. Checked name by name
    and pair by pair (a workload's task and precision, a runtime's task and kind of device), never
    combination by combination: a row of six 64-long lists costs what its lists do, not their product."""
    found: dict[str, None] = {}
    for row in suite.grid:
        named = list(dict.fromkeys(row.workloads))
        models = [w for w in named if w in workloads]  # a primitive takes no task, runtime or variant
        tasks, precisions = list(dict.fromkeys(row.tasks)), list(dict.fromkeys(row.precisions))
        asked = list(dict.fromkeys(row.runtimes)) if models else []
        known = [r for r in asked if r in runtimes]
        reasons = [
            *(unknown_workload(w) for w in named),
            *(unknown_runtime(r) for r in asked),
            *(workload_unsupported(w, t, p) for w, t, p in itertools.product(models, tasks, precisions)),
            *(unknown_variant(None if v == ORIGINAL else v) for v in (dict.fromkeys(row.variants) if models else ())),
            *(task_unrun(r, t) for r, t in itertools.product(known, tasks)),
            *(device_unrun(r, d) for r, d in itertools.product(known, dict.fromkeys(row.devices))),
        ]
        found.update((reason, None) for reason in reasons if reason is not None)
    said = "no machine can run part of this suite (an agent records it unsupported): "
    notes = [(said + reason)[:TEXT_MAX] for reason in found]  # a long list of known names is cut, not refused
    if len(notes) > NOTES_MAX:
        notes = [*notes[:NOTES_MAX], f"... and {len(notes) - NOTES_MAX} more reasons (hwadvisor bench shows each)"]
    return notes


def job_notes(suite_toml: str | None) -> list[str]:
    """``suite_notes`` of a job's own suite (``suite_toml``, validated already). A built-in suite has none: its
    grids cross every runtime with every task and kind of device on purpose (``full``), and each machine
    records what it cannot run."""
    from app.bench.suites import parse_suite

    return suite_notes(parse_suite(suite_toml)) if suite_toml is not None else []
