"""Learning the model's parameters from measurements: a maximum-a-posteriori fit in log space.

Each observation is a measured throughput of a profile at a batch on a device. The residual is
log(predicted) - log(measured). The parameters are the model's (app/perfmodel/model.py, one set per
kind of device) plus one *stack factor* per group of observations that share a software stack and a
way of counting (a published source and its workload: NGC containers with DALI and fused optimisers
are not plain eager PyTorch; Lambda counts GNMT in tokens). A stack factor divides the model's
throughput; the lab's own eager runs have none (factor 1), so they pin the model's absolute level.
Each family of sources (a publisher's yearly reruns: ``public:lambda-2022`` and ``-2024`` are
``public:lambda``) also has one *traffic factor* per workload, task and precision: how much memory
traffic and elementwise work its stack does per sample, relative to the eager profile
(app/perfmodel/model.py). Chosen by leave one GPU out (benchmarks/accuracy.py, docs/ACCURACY.md):
7.8% with it, 8.1% without; shared across the years it does better than one per source (8.3%).

Every parameter has a prior, a documented typical value with a wide spread (PRIORS): a parameter the
data cannot see (batch-1 costs in large-batch training results) stays near it instead of wandering.
The fit is Levenberg-Marquardt on the log of every parameter, with a finite-difference Jacobian.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from app.perfmodel.device import Device
from app.perfmodel.model import PARAMETERS, Array, Case, Columns, Fixed, Params, evaluate, fixed, stacked
from app.perfmodel.profile import Profile

CPU_CACHE_GAIN = 1.0
"""A CPU's cache gain is held at its prior, 1 (a kernel whose working set fits the last-level cache
streams it at twice the DRAM's rate), not fitted: OpenVINO's 12 ResNet-50 rows cannot tell it from the
memory efficiency. Fitted free it went to 7; leave one CPU out gained a point (11.0% -> 9.9%, before
graph runtimes' fusion) while the held-out language-model checks on this project's CPU lost ten
(prefill 5.0% -> 15.8%, benchmarks/llm_accuracy.py) and the lab-CPU check stayed where it was
(docs/ACCURACY.md)."""

# Typical values (median, spread in natural-log units). Efficiencies are fractions of the peak that
# large, well-tuned kernels reach (cuBLAS/cuDNN GEMMs 70-80%, convolutions less, recurrent cells
# much less); half_work in FLOPs per SM or core; times in seconds. Eager PyTorch costs about 10-30 us
# of host time per operator (Python, dispatcher, launch); a CUDA launch alone about 5 us.
PRIORS: dict[str, dict[str, tuple[float, float]]] = {
    "gpu": {
        "conv": (0.55, 0.7),
        "gemm": (0.7, 0.7),
        "attention": (0.5, 0.7),
        "recurrent": (0.3, 1.0),
        "vector": (0.4, 0.7),
        "memory": (0.75, 0.4),
        "cache_gain": (0.5, 1.0),
        "half_work": (4e6, 1.5),
        "kernel_s": (3e-6, 0.5),  # a queued kernel's gap and tail; the published rows cannot see it
        "launch_s": (4e-6, 0.7),
        "dispatch_eager_s": (2.5e-5, 0.7),
        "dispatch_graph_s": (4e-6, 1.0),
        "step_s": (1e-4, 1.5),
        "flops_per_w": (2e12, 1.0),
        "sm_hz_per_w": (1e9, 1.0),
    },
    "cpu": {
        "conv": (0.45, 0.7),
        "gemm": (0.6, 0.7),
        "attention": (0.4, 0.7),
        "recurrent": (0.3, 1.0),
        "vector": (0.2, 1.0),
        "memory": (0.6, 0.5),
        "cache_gain": (CPU_CACHE_GAIN, 0.01),  # held there: a spread of 1%
        "half_work": (2e5, 1.5),
        "kernel_s": (1e-6, 1.0),
        "launch_s": (1e-6, 1.0),
        "dispatch_eager_s": (1.5e-5, 0.7),
        "dispatch_graph_s": (3e-6, 1.0),
        "step_s": (1e-4, 1.5),
        "flops_per_w": (1e12, 1.0),
        "sm_hz_per_w": (1e9, 1.0),
    },
}
STACK_PRIOR_SPREAD = 1.0
"""A stack or traffic factor's prior: 1 (the same as eager PyTorch), spread e^1 either way."""
DATA_SPREAD = 0.05
"""How far one measurement may sit from the truth (log units): the run-to-run spread of one part in the
published data (six H100 SXM5 hosts span about ±4%). It weighs the data against the priors."""


def traffic_group(group: str) -> str:
    """The traffic-factor group of a stack-factor group: the source's family (its version dropped)."""
    source, _, rest = group.partition("/")
    return f"{re.sub(r'-[0-9][0-9.]*$', '', source)}/{rest}"


@dataclass(frozen=True, slots=True)
class Observation:
    profile: Profile
    batch: int
    device: Device
    throughput: float
    """Samples per second on one device."""
    runtime: str
    group: str | None
    """The stack-factor group (``source/workload``); None for the lab's own eager runs (factor 1)."""
    threads: int | None = None
    label: str = ""
    streams: int = 1
    """Copies of the step that ran at once, each on ``threads`` cores (app/perfmodel/model.py ``Case``)."""
    weight: float = 1.0
    """How much of one measurement this observation is: a lab machine known only by its generation is
    one observation per catalog part it may be, each weighing a share (app/perfmodel/lab_levels.py)."""


@dataclass(frozen=True, slots=True)
class Fit:
    params: Params
    stacks: dict[str, float]
    """Each group's stack factor: the model's throughput is divided by it."""
    traffic: dict[str, float]
    """Each traffic group's factor on memory traffic and elementwise work (``traffic_group``)."""


@dataclass(frozen=True, slots=True)
class _Design:
    cols: Columns
    device: dict[str, Array]
    batch: Array
    measured: Array
    group: np.ndarray
    groups: list[str]
    traffic_of: np.ndarray
    """Per stack group (and a last entry for none): the index of its traffic group."""
    traffics: list[str]
    weight: Array
    known: Fixed
    """``fixed`` of the cases: the same for every parameter the fit tries."""


def _design(observations: Sequence[Observation]) -> _Design:
    groups = sorted({o.group for o in observations if o.group is not None})
    index = {g: i for i, g in enumerate(groups)}
    traffics = sorted({traffic_group(g) for g in groups})
    cols, figures = stacked(
        [Case(o.profile, o.device, o.batch, o.runtime, o.threads, streams=o.streams) for o in observations]
    )
    return _Design(
        cols=cols,
        device=figures,
        batch=np.array([o.batch * o.streams for o in observations], dtype=float),
        measured=np.array([o.throughput for o in observations]),
        group=np.array([index[o.group] if o.group is not None else -1 for o in observations]),
        groups=groups,
        traffic_of=np.array([traffics.index(traffic_group(g)) for g in groups] + [-1]),
        traffics=traffics,
        weight=np.array([o.weight for o in observations]),
        known=fixed(cols, figures),
    )


def _rows(design: _Design, rows: np.ndarray) -> _Design:
    """``design`` for the observations ``rows`` alone (ascending), with the same groups: each row's
    throughput comes out exactly as the whole design's does, its buckets the same in the same order."""
    keep = np.isin(design.cols.case, rows)
    renumbered = np.full(design.cols.cases, -1)
    renumbered[rows] = np.arange(len(rows))
    c = design.cols
    cols = replace(
        c,
        case=renumbered[c.case[keep]],
        flops=c.flops[keep],
        bytes=c.bytes[keep],
        kernels=c.kernels[keep],
        operators=c.operators[keep],
        tensor=c.tensor[keep],
        efficiency=c.efficiency[keep],
        convolution=c.convolution[keep],
        blas=c.blas[keep],
        cases=len(rows),
        compute_share=None if c.compute_share is None else c.compute_share[keep],
        bandwidth_share=None if c.bandwidth_share is None else c.bandwidth_share[keep],
        product_threads=None if c.product_threads is None else [c.product_threads[r] for r in rows],
    )
    return replace(
        design,
        cols=cols,
        device={name: figure[rows] for name, figure in design.device.items()},
        batch=design.batch[rows],
        measured=design.measured[rows],
        group=design.group[rows],
        weight=design.weight[rows],
        known=design.known.picked(keep, rows),
    )


def _predict(like: Params, theta: Array, design: _Design) -> Array:
    """Throughput per observation; ``theta`` is the log of the parameters, stack factors, traffic factors;
    what is not fitted (the eager kernel factors, the autograd factor, the stream rate) is ``like``'s."""
    n, g = len(PARAMETERS), len(design.groups)
    params = replace(like, values=dict(zip(PARAMETERS, np.exp(theta[:n]).tolist(), strict=True)))
    stacks = np.concatenate([np.exp(theta[n : n + g]), [1.0]])
    traffic = np.concatenate([np.exp(theta[n + g :]), [1.0]])
    figures = design.device | {"traffic": traffic[design.traffic_of[design.group]]}
    seconds = evaluate(params, design.cols, design.known, False, **figures)["seconds"]  # the seconds alone
    throughput: Array = design.batch / (seconds * stacks[design.group])
    return throughput


STARTS = {"gpu": 8, "cpu": 1}
"""How many starting points each kind's fit descends from, keeping the lowest cost: the prior's mean,
then draws around it (``START_SPREAD``). The GPU posterior has many local optima (40 starts on the
shipped rows ended between 912 and 1,608, the prior's mean at 927): the efficiencies' cap at 1, the
power-bound clock's and the cache's kinks stop a descent at the first one it meets. Several starts were
taken over one on that ground, the lower cost, and measured after (docs/ACCURACY.md, session 36); 8,
not more: 16 and 24 did not move leave one GPU out (session 37), and each start costs its 30
leave-one-out fits. The CPU fit, a dozen published rows, has one start."""
START_SPREAD = 0.5
"""A start's distance from the prior's mean, in units of each parameter's prior spread (a normal draw)."""
START_SEED = 0
"""The draws' seed: the same observations always give the same fit."""


def fit(
    observations: Sequence[Observation],
    kind: str,
    *,
    like: Params | None = None,
    iterations: int = 60,
    starts: int | None = None,
) -> Fit:
    """The parameters (and stack factors) that best explain ``observations`` of devices of ``kind``, with
    ``like``'s factors that are not fitted (none by default: 1, or no stream rate): the lowest-cost of
    ``starts`` descents (STARTS by default)."""
    like = like or Params(kind, {})
    design = _design([o for o in observations if o.device.kind == kind])
    prior = PRIORS[kind]
    factors = len(design.groups) + len(design.traffics)
    mean = np.array([math.log(prior[p][0]) for p in PARAMETERS] + [0.0] * factors)
    spread = np.array([prior[p][1] for p in PARAMETERS] + [STACK_PRIOR_SPREAD] * factors)

    weight = np.sqrt(design.weight)

    def residuals(theta: Array) -> Array:
        fitted = weight * (np.log(_predict(like, theta, design)) - np.log(design.measured)) / DATA_SPREAD
        return np.concatenate([fitted, (theta - mean) / spread])

    # a traffic factor moves its own group's rows alone: its column of the Jacobian re-evaluates those
    rows_of = design.traffic_of[design.group]
    first = len(PARAMETERS) + len(design.groups)
    blocks = {first + t: np.flatnonzero(rows_of == t) for t in range(len(design.traffics))}
    parts = {k: _rows(design, rows) for k, rows in blocks.items()}

    def moved_alone(k: int, theta: Array, current: Array) -> Array | None:
        if k not in blocks:
            return None
        rows, part = blocks[k], parts[k]
        found = current.copy()
        found[rows] = weight[rows] * (np.log(_predict(like, theta, part)) - np.log(part.measured)) / DATA_SPREAD
        found[len(rows_of) :] = (theta - mean) / spread
        return found

    draws = np.random.default_rng(START_SEED)
    best: tuple[float, Array] | None = None
    stacks = _stack_columns(design, weight, spread)
    for start in range(STARTS.get(kind, 1) if starts is None else starts):
        away = START_SPREAD * draws.standard_normal(len(mean)) if start else 0.0
        cost, theta = _descend(residuals, mean + away * spread, iterations, stacks, moved_alone)
        if best is None or cost < best[0]:
            best = (cost, theta)
    assert best is not None, "at least one start"
    values = np.exp(best[1])
    n, g = len(PARAMETERS), len(design.groups)
    return Fit(
        params=replace(like, values=dict(zip(PARAMETERS, values[:n].tolist(), strict=True))),
        stacks=dict(zip(design.groups, values[n : n + g].tolist(), strict=True)),
        traffic=dict(zip(design.traffics, values[n + g :].tolist(), strict=True)),
    )


def _stack_columns(design: _Design, weight: Array, spread: Array) -> dict[int, Array]:
    """The residuals' derivative by each stack factor's log, which is constant: an observation's log
    throughput falls by exactly the log of its group's factor, and the factor's prior residual rises by
    it over its spread. Differencing them as the other parameters are would cost a model evaluation each
    (a third of the fit's time) for the same columns."""
    n, rows = len(PARAMETERS), len(design.measured)
    columns: dict[int, Array] = {}
    for g in range(len(design.groups)):
        column = np.zeros(rows + len(spread))
        column[:rows] = -weight * (design.group == g) / DATA_SPREAD
        column[rows + n + g] = 1.0 / spread[n + g]
        columns[n + g] = column
    return columns


def _descend(
    residuals: Callable[[Array], Array],
    theta: Array,
    iterations: int,
    known: Mapping[int, Array],
    alone: Callable[[int, Array, Array], Array | None] | None = None,
) -> tuple[float, Array]:
    """Levenberg-Marquardt from ``theta`` (a finite-difference Jacobian, but for the ``known`` columns,
    constant and given): the cost (the residuals' sum of squares) and the point it stopped at. Where a
    parameter ``k`` moves few rows, ``alone(k, theta, current)`` gives the residuals at ``theta`` by
    re-evaluating those rows alone, the same numbers ``residuals`` would give (None: it does not)."""
    damping = 1e-2
    current = residuals(theta)
    cost = float(current @ current)
    for _ in range(iterations):
        step = 1e-4
        jacobian = np.empty((len(current), len(theta)))
        for k in range(len(theta)):
            if k in known:
                jacobian[:, k] = known[k]
                continue
            moved = theta.copy()
            moved[k] += step
            at = alone(k, moved, current) if alone is not None else None
            jacobian[:, k] = ((residuals(moved) if at is None else at) - current) / step
        normal = jacobian.T @ jacobian
        gradient = jacobian.T @ current
        improved = False
        while damping < 1e8:
            delta = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12), -gradient)
            candidate = theta + delta
            trial = residuals(candidate)
            trial_cost = float(trial @ trial)
            if math.isfinite(trial_cost) and trial_cost < cost:
                theta, current, cost = candidate, trial, trial_cost
                damping = max(damping / 3, 1e-7)
                improved = True
                break
            damping *= 4
        if not improved or float(np.max(np.abs(delta))) < 1e-6:
            break
    return cost, theta


def predict(fitted: Fit, observations: Sequence[Observation]) -> Array:
    """The fitted model's throughput for each observation's config (a group it never saw: factors 1)."""
    if not observations:
        return np.array([])
    design = _design(observations)
    values = (
        [fitted.params[p] for p in PARAMETERS]
        + [fitted.stacks.get(g, 1.0) for g in design.groups]
        + [fitted.traffic.get(t, 1.0) for t in design.traffics]
    )
    theta = np.log(np.array(values, dtype=float))
    return _predict(fitted.params, theta, design)


@dataclass(frozen=True, slots=True)
class Held:
    """One observation predicted by the model calibrated without its part."""

    observation: Observation
    predicted: float
    """With its group's stack factor, as learned from the other parts."""
    unstacked: float
    """Without any stack factor: what the model says with nothing to calibrate the stack on."""


def leave_one_part_out(
    observations: Sequence[Observation], kind: str, *, only: str | None = None, like: Params | None = None
) -> list[Held]:
    """Each part (whose label contains ``only``, if given) predicted by the model fitted on every other part
    (with ``like``'s factors that are not fitted, as ``fit``)."""
    mine = [o for o in observations if o.device.kind == kind]
    parts = sorted({o.device.id for o in mine if only is None or only in o.label})
    held_out: list[Held] = []
    for part in parts:
        fitted = fit([o for o in mine if o.device.id != part], kind, like=like)
        held = [o for o in mine if o.device.id == part and (only is None or only in o.label)]
        bare = Fit(fitted.params, {}, {})
        for o, p, u in zip(held, predict(fitted, held), predict(bare, held), strict=True):
            held_out.append(Held(o, float(p), float(u)))
    return held_out
