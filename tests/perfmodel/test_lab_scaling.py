"""The lab's data-parallel runs as scaling evidence: the link factor fit, and measured configs."""

from __future__ import annotations

import pytest

from app.contracts import Precision
from app.perfmodel import scaling
from app.perfmodel.lab_scaling import LabRun, LabScaling, fit_factor, link_key

PARAMS = scaling.ScalingParams(link_efficiency=0.5, overlap=0.3, hop_s=2e-5)
PCIE = scaling.Link("pcie", 31.5)


def run(devices: int, factor: float, *, single_step_s: float = 0.2, gradient: float = 100e6, batch: int = 64) -> LabRun:
    """A run whose all-reduce took ``factor`` times the model's time over ``PCIE``."""
    throughput = float(
        scaling.data_parallel_throughputs(single_step_s, batch, devices, gradient, PCIE.gb_s, PARAMS, factor)
    )
    return LabRun(
        key=link_key(PCIE, part="rtx-4090"),
        workload="resnet50",
        precision=Precision.fp16,
        batch=batch,
        devices=devices,
        throughput=throughput,
        efficiency=throughput / (devices * batch / single_step_s),
        gradient_bytes=gradient,
        link_gb_s=PCIE.gb_s,
    )


@pytest.mark.parametrize("factor", [0.25, 1.0, 3.0, 40.0])
def test_the_link_factor_the_runs_were_made_with_is_recovered(factor: float) -> None:
    runs = [run(n, factor, single_step_s=0.02, gradient=g) for n in (2, 4, 8) for g in (50e6, 400e6)]
    assert fit_factor(runs, PARAMS) == pytest.approx(factor, rel=0.02)


def test_runs_whose_all_reduce_hides_behind_compute_leave_the_model_as_it_is() -> None:
    """A long step hides a small all-reduce at any factor near 1: the runs say nothing, so 1 stays."""
    runs = [run(n, 1.0, single_step_s=5.0, gradient=1e6) for n in (2, 4)]
    assert fit_factor(runs, PARAMS) == pytest.approx(1.0)


def test_a_runs_own_baseline_gives_the_single_device_step() -> None:
    found = run(4, 2.0, single_step_s=0.2)
    assert found.single_step_s == pytest.approx(0.2)


def test_measured_configs_take_the_median_of_their_runs_and_links_their_fitted_factor() -> None:
    slow = [run(8, 10.0, single_step_s=0.02), run(8, 12.0, single_step_s=0.02), run(8, 11.0, single_step_s=0.02)]
    lab = LabScaling.of(slow, PARAMS)
    key = link_key(PCIE, part="rtx-4090")
    efficiency, runs = lab.measured(key, "resnet50", Precision.fp16, 64, 8) or (None, None)
    assert runs == 3 and efficiency == pytest.approx(sorted(r.efficiency for r in slow)[1])
    assert lab.measured(key, "resnet50", Precision.fp16, 64, 4) is None
    assert lab.measured(key, "bert_base", Precision.fp16, 64, 8) is None
    factor = lab.factor(key)
    assert factor is not None and factor.runs == 3 and 9 < factor.factor < 13
    assert lab.factor(link_key(PCIE, part="rtx-3090")) is None
    (said,) = lab.words()
    assert "3 data-parallel run(s) over pcie rtx-4090" in said


def test_a_declared_clusters_network_is_kept_by_the_cluster_not_the_part() -> None:
    network = scaling.Link("network", 12.5)
    assert link_key(network, part="h100-sxm5-80gb", cluster="rack-b") == "cluster:rack-b"
    assert link_key(PCIE, part="rtx-4090") == "pcie:rtx-4090"
