"""The planner's device counts: searched, not enumerated, and the fewest reaching a target is the same
as if every count up to the most allowed had been evaluated (hypothesis)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.catalog import get
from app.contracts import Cluster, Precision, Task
from app.perfmodel import scaling
from app.perfmodel.lab_scaling import LabRun, LabScaling, link_key
from app.perfmodel.profile import Linear, Memory
from app.planner import scale
from app.planner.memory import Fit
from app.planner.scale import fewest_reaching, scaled

H100 = get("h100-sxm5-80gb")
EPYC = get("epyc-9654")
NVLINK = link_key(scaling.ring_link(H100, 8) or scaling.Link("network", 25.0), part=H100.id)
"""Where the lab's runs inside an H100 system are kept."""
TRAINING: dict[str, float] = {
    "per_system": 8,
    "network": 25.0,
    "weights": 1e8,
    "single": 2_000.0,
    "batch": 256,
    "shards": 1,
    "train": True,
    "cpu": False,
}
"""ResNet-50-sized data-parallel training on H100s, eight to a system (``most`` added by each test)."""


def _scaled(draw: dict[str, float], needed: float | None, lab: LabScaling, every: bool) -> scale.Scaled:
    cluster = Cluster(
        max_devices=int(draw["most"]),
        devices_per_system=int(draw["per_system"]),
        network_gb_s=draw["network"],
    )
    memory = Memory(weights=draw["weights"], activations=Linear())
    task = Task.train if draw["train"] else Task.infer
    searched = scale.searched
    try:
        if every:  # the reference: every count evaluated
            scale.searched = _every
        return scaled(
            task=task,
            single_throughput=draw["single"],
            batch=int(draw["batch"]),
            fit=Fit(int(draw["shards"]), math.nan, math.nan),
            memory=memory,
            precision=Precision.bf16,
            hardware=EPYC if draw["cpu"] else H100,
            cluster=cluster,
            workload="resnet50",
            lab=lab,
            needed=needed,
        )
    finally:
        scale.searched = searched


def _every(
    first: int, step: int, most: int, _needed: object, _extra: object, throughput_of: Any
) -> tuple[np.ndarray, np.ndarray]:
    counts = np.arange(first, most + 1, step, dtype=np.float64)
    return counts, throughput_of(counts)


drawn = st.fixed_dictionaries(
    {
        "most": st.integers(min_value=1, max_value=20_000),
        "per_system": st.integers(min_value=1, max_value=64),
        "network": st.floats(min_value=0.5, max_value=400),
        "weights": st.floats(min_value=1e5, max_value=1e11),
        "single": st.floats(min_value=1, max_value=1e5),
        "batch": st.integers(min_value=1, max_value=1024),
        "shards": st.sampled_from([1, 1, 1, 2, 3, 8]),
        "train": st.booleans(),
        "cpu": st.booleans(),
        "target": st.floats(min_value=0.1, max_value=1e9),
        "measured_at": st.integers(min_value=2, max_value=20_000),
        "efficiency": st.floats(min_value=0.05, max_value=1.0),
    }
)


@settings(max_examples=150, deadline=None)
@given(drawn)
def test_the_fewest_devices_reaching_a_target_are_found_as_if_every_count_were_evaluated(
    draw: dict[str, float],
) -> None:
    assume(draw["shards"] <= draw["most"])  # the planner refuses a model that needs more (memory.fewest)
    # a lab run measured one count of this config over the H100's NVLink: it overrides the model there
    run = LabRun(
        key=NVLINK,
        workload="resnet50",
        precision=Precision.bf16,
        batch=int(draw["batch"]),
        devices=int(draw["measured_at"]),
        throughput=1.0,
        efficiency=draw["efficiency"],
        gradient_bytes=1e8,
        link_gb_s=100.0,
    )
    lab = LabScaling(efficiencies={(run.key, run.workload, run.precision, run.batch, run.devices): (run.efficiency, 1)})
    needed = draw["target"]
    fast, every = (_scaled(draw, needed, lab, every) for every in (False, True))
    assert set(fast.devices.tolist()) <= set(every.devices.tolist())
    at = dict(zip(every.devices.tolist(), every.throughput.tolist(), strict=True))
    assert fast.throughput.tolist() == pytest.approx([at[n] for n in fast.devices.tolist()])
    found, truth = fewest_reaching(fast, needed), fewest_reaching(every, needed)
    assert (found is None) == (truth is None)
    if found is not None and truth is not None:
        assert fast.devices[found] == every.devices[truth]
    assert fast.devices[-1] == every.devices[-1]  # the most allowed, for a refusal's figures
    assert fast.devices[0] == every.devices[0]  # the fewest, where nothing is needed


def test_a_hundred_thousand_devices_allowed_evaluate_a_few_thousand_counts() -> None:
    """A plan may allow 100,000 devices; the planner sizes thousands of options, each at the counts its
    search evaluates (it took 159 s through the API when every count was evaluated)."""
    draw = {**TRAINING, "most": 100_000}
    for needed in (None, 1e5, 1e7, 1e12):
        found = _scaled(draw, needed, LabScaling(), every=False)
        assert len(found.devices) < scale.EXACT + 1_000
        assert found.devices[-1] == 100_000 and np.all(np.diff(found.devices) > 0)


def test_a_measured_count_that_falls_short_where_the_model_first_reaches_passes_to_the_next() -> None:
    """The model first reaches the target at a count of its grid, and the lab measured that very count
    far below the model: the fewest devices are the next count, which the search must evaluate too."""
    draw = {**TRAINING, "most": 20_000}
    nothing = _scaled(draw, None, LabScaling(), every=True)
    grid = _scaled(draw, None, LabScaling(), every=False).devices
    count = int(next(n for n in grid.tolist() if n > 1.5 * scale.EXACT))
    needed = float(nothing.throughput[count - 1])  # counts run 1, 2, ...: the model first reaches it here
    assert nothing.throughput[count - 2] < needed
    between = link_key(scaling.Link("network", 25.0), part=H100.id)
    short = LabScaling(efficiencies={(k, "resnet50", Precision.bf16, 256, count): (1e-4, 1) for k in (NVLINK, between)})
    fast, every = (_scaled(draw, needed, short, every) for every in (False, True))
    found, truth = fewest_reaching(fast, needed), fewest_reaching(every, needed)
    assert truth is not None and every.devices[truth] == count + 1
    assert found is not None and fast.devices[found] == count + 1
