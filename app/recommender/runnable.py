"""Whether what an ask names can run at all, before any estimate: a zoo workload's tasks (the workload
registry: BERT-base neither prefills nor decodes), and a runtime's tasks and device kinds (the runtime
registry). A figure for a config no runtime could run (OpenVINO training, ONNX Runtime's CUDA provider on
a CPU, a runtime nobody wrote) is not a prediction of anything a lab could buy and measure; the answer says
which runtimes run it instead. A precision is not refused here: the plug-ins measure fewer precisions than
their runtimes run (TensorRT's int8, ONNX Runtime's fp16 on CUDA), and where the model cannot speak for one
the estimators say why.

Published results keep their own stacks' names (Lambda's NGC containers: ``pytorch-ngc``), which the
registry does not hold: a runtime some stored result names is left to the estimators, which say what they
can carry of it; and a runtime results of the asked workload and task measured on the kind of device asked
is never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from app.bench.runtimes.base import runtimes
from app.bench.unrunnable import kind_unrun, task_unrun, workload_untasked
from app.bench.workloads.base import workloads
from app.contracts import DeviceKind, Task
from app.errors import InvalidInput, NotFoundError


def refuse_untasked(workload: str, task: Task) -> None:
    """Raise where the zoo workload ``workload`` has no ``task``; a published workload (no plug-in has its
    name: ``bert_base_squad``) is left to what measured it."""
    if workload not in workloads:
        return
    untasked = workload_untasked(workload, task)
    if untasked is not None:
        raise InvalidInput(
            untasked,
            hint="prefill and decode are a language model's (GET /api/v1/registry lists each workload's tasks)",
        )


def refuse_unrunnable(
    runtime: str,
    task: Task,
    kind: DeviceKind,
    hardware: str,
    measured: Collection[tuple[str, DeviceKind]] = frozenset(),
    named: Callable[[], Collection[str]] = frozenset,
) -> None:
    """Raise, saying what to ask instead, where ``runtime`` cannot run ``task`` on a ``kind`` device
    (``hardware`` names it); nothing where it can. ``measured``: the (runtime, device kind) pairs results
    of the asked workload and task hold; ``named``: every runtime a stored result names (read only for a
    name no plug-in has)."""
    if (runtime, kind) in measured:
        return
    if runtime not in runtimes:
        if any(name == runtime for name, _ in measured) or runtime in named():
            return  # a published stack: the estimators say what they can carry of it
        raise NotFoundError(_unnamed(runtime), hint=_names())
    reason = why_not(runtime, task, kind, hardware)
    if reason is not None:
        raise InvalidInput(reason, hint=instead(task, kind))


def why_not(runtime: str, task: Task, kind: DeviceKind, hardware: str | None = None) -> str | None:
    """Why the runtime plug-in ``runtime`` cannot run ``task`` on a ``kind`` device (``hardware``, where
    one is asked); None where it can. The words are those a job's notes and an agent's unsupported
    results use (app/bench/unrunnable.py)."""
    reason = task_unrun(runtime, task)
    if reason is None and (reason := kind_unrun(runtime, kind.value)) is not None and hardware:
        reason += f": {hardware} is a {kind.value} device"
    return reason


def instead(task: Task, kind: DeviceKind) -> str:
    """The runtimes that run ``task`` on a ``kind`` device, in words."""
    fits = [e.name for e in runtimes if task.value in e.plugin.info.tasks and kind.value in e.plugin.info.devices]
    if not fits:
        return f"no runtime runs {task.value} on a {kind.value} device"
    return f"runtimes that run {task.value} on a {kind.value} device: {', '.join(fits)}"


def filter_notes(
    asked: Collection[str], task: Task, kinds: Collection[DeviceKind], named: Callable[[], Collection[str]]
) -> list[str]:
    """A recommendation's runtimes filter, runtime by runtime: why one of them can have no candidate (no
    runtime has its name, or it runs ``task`` on none of the ``kinds`` of device asked)."""
    notes = []
    unknown = [runtime for runtime in asked if runtime not in runtimes]
    stored = named() if unknown else frozenset()
    for runtime in asked:
        if runtime in unknown:
            if runtime not in stored:
                notes.append(f"{_unnamed(runtime)} ({_names()})")
            continue
        reasons = [why_not(runtime, task, kind) for kind in kinds]
        if all(reasons):
            alternatives = "; ".join(instead(task, kind) for kind in kinds)
            notes.append(f"{reasons[0]}, so it has no candidate ({alternatives})")
    return notes


def _unnamed(runtime: str) -> str:
    return f"no runtime is named {runtime!r}: no runtime plug-in has that name, and no stored result names it"


def _names() -> str:
    return f"runtimes: {', '.join(runtimes.names())} (GET /api/v1/registry says what each runs)"
