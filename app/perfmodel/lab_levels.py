"""The CPU model's absolute level from this project's own lab CPUs.

OpenVINO's published Xeon rows, the CPU fit's other data, cannot set how fast a CPU's kernels run:
their stack factor (one per source, workload and precision) takes whatever level the class
efficiencies leave, so the convolution efficiency stayed where its prior put it and nothing set the
GEMM, recurrent and attention ones at all. Eager PyTorch and ONNX Runtime, what the lab runs and what
every CPU prediction is for, came out at 0.5-0.9x what the lab's VMs measured (benchmarks/lab_cpu.py).

The lab CPUs that ran the quick suite's CPU configs under both runtimes
(app/perfmodel/data/cpu_runtime_pairs.json, which also sets the eager kernel factors) measured
absolute figures, and the lab's own stacks carry no stack factor: those figures are observations of
the model's level. A lab VM is known by its generation, not its part (a 2-vCPU slice reports a
generic name), so each figure is one observation per catalog part of that generation, each weighing
a share of one measurement: the fit meets the geometric mean over the parts, as benchmarks/lab_cpu.py
compares against their median.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from app.catalog import CatalogHardware, load
from app.perfmodel import calibrate
from app.perfmodel.calibrate import DATA_SPREAD, Fit, Held, Observation, fit, predict
from app.perfmodel.device import device
from app.perfmodel.model import EAGER_RUNTIME
from app.perfmodel.runtime_pairs import Machine, factors, on_tiles, profile_of_pair, with_factors
from app.perfmodel.runtime_pairs import shipped as shipped_pairs

LAB_SPREAD = 0.25
"""How far one lab figure may sit from its generation's level (log units), where a published row may sit
0.05 from its part's (``DATA_SPREAD``): a 2-vCPU VM is an unknown part of its generation, shared with
neighbours (two runs a minute apart on the Zen 4 VM differed by up to 20%; the Zen 3 VM ran ResNet-50 at
the Zen VM's speed with twice its FLOPs per cycle), and the figures scatter by 0.27 (rms) about the fitted
level. Weighed as published rows, the 40 figures' scatter moved the parameters OpenVINO's rows also set
(leave one CPU out 11.2% -> 12.8%; at this spread 11.5%, the level as good: docs/ACCURACY.md)."""
LAB_WEIGHT = (DATA_SPREAD / LAB_SPREAD) ** 2

ROUNDS = 2
"""How many times the level is fitted with the lab's figures, after a first fit on the published rows
alone, each time at the eager kernel factors the fit before gave. The factors are ratios on one machine
and hardly move with the level: the second time changes them in the third decimal."""

BAND = "cpu-lab"
"""The band of a levelled runtime's CPU figure that no lab measurement of the part calibrates: the 90%
quantile of the sixth test's errors, each lab machine's figures predicted from the others
(``leave_one_machine_out``, written by scripts/calibrate_perfmodel.py)."""


def levelled(kind: str, runtime: str, unit: str | None = None) -> bool:
    """Whether the lab's figures set the level of ``runtime`` on a device of ``kind`` at a precision that
    runs on ``unit`` (app/perfmodel/device.py ``matrix_unit``): on CPUs, for eager PyTorch and the graph
    runtimes the shipped pairs measured beside it, on the vector units (the figures on tile units set
    their eager factors, never the level)."""
    return kind == "cpu" and unit != "tile" and runtime in _levelled()


@cache
def _levelled() -> frozenset[str]:
    catalog = load()
    return frozenset(
        {
            EAGER_RUNTIME,
            *(p.graph_runtime for m in shipped_pairs().machines for p in m.pairs if not on_tiles(p, m.parts(catalog))),
        }
    )


def observations(machines: Sequence[Machine], catalog: Sequence[CatalogHardware]) -> list[Observation]:
    """Every machine's eager and graph-runtime figures, each spread over the parts its generation has."""
    return [o for m in machines for _config, spread in _figures(m, catalog) for o in spread]


def _figures(machine: Machine, catalog: Sequence[CatalogHardware]) -> list[tuple[str, list[Observation]]]:
    """Per figure the machine measured (a pair's eager and graph-runtime throughputs), its config and its observations:
    one per catalog part the machine may be, each weighing a share. A figure the model cannot price (no
    profile, no part with a peak at its precision) has none and is left out, and so is a pair on tile
    units, which measures the eager tile factors (app/perfmodel/runtime_pairs.py), not the level."""
    parts = machine.parts(catalog)
    found = []
    for pair in machine.pairs:
        if on_tiles(pair, parts):
            continue
        profile = profile_of_pair(pair)
        devices = [d for part in parts if (d := device(part, pair.precision)) is not None]
        if profile is None or not devices:
            continue
        for runtime, throughput in ((EAGER_RUNTIME, pair.eager), (pair.graph_runtime, pair.graph)):
            config = (
                f"{pair.workload}/{pair.task.value} {pair.precision.value} {runtime} "
                f"batch {pair.batch} threads {pair.threads}"
            )
            spread = [
                Observation(
                    profile=profile,
                    batch=pair.batch,
                    device=dev,
                    throughput=throughput,
                    runtime=runtime,
                    group=None,
                    threads=pair.threads,
                    label=f"{machine.name} {config} (lab, as {dev.id})",
                    weight=LAB_WEIGHT / len(devices),
                )
                for dev in devices
            ]
            found.append((config, spread))
    return found


def calibrated(
    published: Sequence[Observation], machines: Sequence[Machine], catalog: Sequence[CatalogHardware]
) -> Fit:
    """The CPU fit on ``published`` and the ``machines``' figures, with the eager kernel factors their
    pairs give (app/perfmodel/runtime_pairs.py) in its parameters.

    The factors and the level depend on each other (a factor is the model's eager / graph ratio made
    right on the parts the level was fitted with): the level is first fitted on the published rows alone,
    then refitted with the lab's figures, each round at the factors the one before gave."""
    fitted = fit(published, "cpu")
    found = factors(machines, catalog, fitted.params)
    lab = observations(machines, catalog)
    for _ in range(ROUNDS):
        fitted = fit([*published, *lab], "cpu", like=with_factors(fitted.params, found))
        found = factors(machines, catalog, fitted.params)
    return replace(fitted, params=with_factors(fitted.params, found))


def leave_one_part_out(
    published: Sequence[Observation],
    machines: Sequence[Machine],
    catalog: Sequence[CatalogHardware],
    fitted: Fit,
    *,
    only: str,
) -> list[Held]:
    """Each part of ``published`` whose rows' labels hold ``only`` (its source) predicted by the CPU model
    fitted on the other parts' rows and the ``machines``' figures, at ``fitted``'s eager kernel factors:
    leave one CPU out with the lab level in it. A lab figure spread over the held-out part goes with it."""
    lab = observations(machines, catalog)
    return calibrate.leave_one_part_out([*published, *lab], "cpu", only=only, like=fitted.params)


@dataclass(frozen=True, slots=True)
class Figure:
    """One lab figure against the model's: the median over the parts its machine may be."""

    machine: str
    config: str
    measured: float
    predicted: float


def figures(fitted: Fit, machine: Machine, catalog: Sequence[CatalogHardware]) -> list[Figure]:
    """``machine``'s figures beside ``fitted``'s median prediction over its generation's parts."""
    found = []
    for config, spread in _figures(machine, catalog):
        predicted = statistics.median(float(p) for p in predict(fitted, spread))
        found.append(Figure(machine.name, config, spread[0].throughput, predicted))
    return found


def leave_one_machine_out(
    published: Sequence[Observation], machines: Sequence[Machine], catalog: Sequence[CatalogHardware]
) -> list[Figure]:
    """Each machine's figures predicted by the model calibrated on ``published`` and the other machines."""
    found = []
    for m in machines:
        if not _figures(m, catalog):  # its pairs all on tile units: nothing of the level to predict
            continue
        fitted = calibrated(published, [other for other in machines if other.name != m.name], catalog)
        found.extend(figures(fitted, m, catalog))
    return found
