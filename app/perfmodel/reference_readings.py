"""hwadvisor's GPU reference runs as readings of the power model (app/perfmodel/power_fit.py).

Each settled model result of a shipped reference run (app/catalog/data/reference/) whose board power
NVML read is one device reading, with the utilisation of its config at the throughput it measured:
the performance model's matrix FLOPs and bytes of that step (its profile), over the step's measured
time, over the part's peak and bandwidth. That is the utilisation the power model is asked at for a
calibrated figure (app/recommender/power.py ``modelled_draw``): the work the figure does per second,
not the bare model's step's.

So data/power.json rests on the performance model's profiles and parameters too: after
``scripts/calibrate_perfmodel.py`` or ``scripts/build_profiles.py`` changes them, rerun
``scripts/calibrate_power.py`` (tests/perfmodel/test_calibrate_power.py fails until then).
"""

from __future__ import annotations

from collections.abc import Iterable

from app.catalog import get, reference
from app.contracts import PublicResult, ReferenceRun
from app.perfmodel.power_fit import Observation
from app.perfmodel.predict import predict


def reading(row: PublicResult, *, at_measured_rate: bool = True) -> Observation | None:
    """One reference row as a device reading; None where it read no power or the model cannot profile it.
    ``at_measured_rate`` False: at the bare model's step's utilisation instead (what the recommender used
    before session 28; benchmarks/power_check.py sets the two side by side)."""
    if not row.mean_power_w or row.task is None:
        return None
    part = get(row.hardware_id)
    modelled = predict(row.workload, row.task, row.precision, row.batch_size, part, runtime=row.runtime)
    if modelled is None or modelled.throughput <= 0:
        return None
    busier = row.throughput_samples_per_s / modelled.throughput if at_measured_rate else 1.0
    b = modelled.breakdown
    return Observation(
        hardware=part,
        compute_util=min(1.0, float(b.utilisation_compute * busier)),
        memory_util=min(1.0, float(b.utilisation_memory * busier)),
        watts=row.mean_power_w,
        label=f"{row.source} {row.workload}/{row.task.value} {row.runtime} {row.precision.value} "
        f"batch {row.batch_size}",
    )


def readings(runs: Iterable[ReferenceRun] | None = None, *, at_measured_rate: bool = True) -> list[Observation]:
    """Every reference run's readings (the shipped runs by default)."""
    found = []
    for run in reference.shipped() if runs is None else runs:
        for row in reference.as_published(run):
            observed = reading(row, at_measured_rate=at_measured_rate)
            if observed is not None:
                found.append(observed)
    return found
