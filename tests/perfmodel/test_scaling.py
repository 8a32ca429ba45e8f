"""The data-parallel scaling model: ring volume, monotonicity, links read from the catalog, the fit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.catalog import get
from app.contracts import Precision, Task
from app.errors import InvalidInput
from app.perfmodel import scaling
from app.perfmodel.profile import shipped as profiles
from app.perfmodel.scaling import Case, Link, ScalingParams

PARAMS = ScalingParams(link_efficiency=0.5, overlap=0.3, hop_s=2e-5)
PCIE4 = Link("pcie", 31.5)


@pytest.mark.parametrize(("devices", "share"), [(1, 0.0), (2, 1.0), (4, 1.5), (8, 1.75)])
def test_ring_sends_two_n_minus_one_over_n_of_the_gradients(devices: int, share: float) -> None:
    assert scaling.ring_bytes(100e6, devices) == pytest.approx(share * 100e6)


def test_allreduce_time_is_ring_bytes_over_effective_bandwidth_plus_hops() -> None:
    seconds = scaling.allreduce_seconds(100e6, 4, PCIE4, PARAMS)
    expected = 1.5 * 100e6 / (0.5 * 31.5e9) + 6 * 2e-5
    assert seconds == pytest.approx(expected)


def test_one_device_is_the_single_device_step() -> None:
    assert scaling.step_seconds(0.25, 1, 1e9, PCIE4, PARAMS) == 0.25
    assert scaling.data_parallel_throughput(0.25, 64, 1, 1e9, PCIE4, PARAMS) == pytest.approx(256.0)


def test_zero_devices_is_refused_with_a_reason() -> None:
    with pytest.raises(InvalidInput, match="at least 1"):
        scaling.step_seconds(0.25, 0, 1e9, PCIE4, PARAMS)


def test_more_link_bandwidth_is_never_slower() -> None:
    speeds = [
        scaling.data_parallel_throughput(0.05, 32, 8, 400e6, Link("pcie", gb_s), PARAMS)
        for gb_s in (4, 8, 16, 32, 64, 150, 450)
    ]
    assert speeds == sorted(speeds)
    assert speeds[0] < speeds[-1]


def test_n_devices_never_beat_n_times_one_and_a_fast_link_comes_close() -> None:
    single = 64 / 0.1
    for devices in (2, 4, 8):
        slow = scaling.data_parallel_throughput(0.1, 64, devices, 400e6, Link("pcie", 8), PARAMS)
        fast = scaling.data_parallel_throughput(0.1, 64, devices, 400e6, Link("nvlink", 450), PARAMS)
        assert slow < fast <= devices * single
        assert fast > 0.99 * devices * single


def test_a_bigger_gradient_takes_longer_on_the_same_link() -> None:
    small = scaling.step_seconds(0.05, 8, 50e6, PCIE4, PARAMS)
    large = scaling.step_seconds(0.05, 8, 1e9, PCIE4, PARAMS)
    assert large > small


def test_sxm_modules_use_nvlink_at_half_the_bidirectional_figure() -> None:
    link = scaling.link_of(get("h100-sxm5-80gb"), 8)
    assert link.kind == "nvlink"
    assert link.gb_s == pytest.approx(450.0)  # 900 GB/s both directions together


def test_pcie_boards_use_pcie_by_generation_and_width() -> None:
    link = scaling.link_of(get("rtx-4090"), 2)  # Ada: no NVLink
    assert link.kind == "pcie"
    assert link.gb_s == pytest.approx(1.969 * 16)
    gen3 = scaling.link_of(get("rtx-2080-ti"), 4)
    assert gen3.gb_s == pytest.approx(0.985 * 16)


def test_a_bridge_joins_two_boards_only() -> None:
    a100 = get("a100-pcie-80gb")
    assert scaling.link_of(a100, 2, bridged=True).kind == "nvlink"
    assert scaling.link_of(a100, 4, bridged=True).kind == "pcie"  # the ring crosses PCIe between pairs
    assert scaling.link_of(a100, 2).kind == "pcie"  # no bridge said: PCIe


def test_a_part_without_a_pcie_figure_says_what_to_add() -> None:
    board = get("rtx-4090").model_copy(update={"pcie_gen": None})
    with pytest.raises(InvalidInput, match="pcie_gen"):
        scaling.link_of(board, 2)


def test_gradient_bytes_are_parameters_times_the_element_size() -> None:
    fp32 = profiles()[("resnet50", Task.train, Precision.fp32)]
    fp16 = profiles()[("resnet50", Task.train, Precision.fp16)]
    assert scaling.gradient_bytes(fp32) == pytest.approx(fp32.memory.weights)  # 4 bytes each
    assert scaling.gradient_bytes(fp16) == pytest.approx(fp16.memory.weights / 2)
    assert 24e6 < fp32.memory.weights / 4 < 27e6  # ResNet-50's 25.6 M parameters


def _synthetic(truth: ScalingParams) -> list[Case]:
    rng = np.random.default_rng(7)
    cases = []
    for _ in range(300):
        devices = int(rng.choice([2, 4, 8]))
        case = Case(
            single_step_s=float(rng.uniform(0.02, 0.5)),
            batch=64,
            devices=devices,
            gradient_bytes=float(rng.uniform(5e7, 1.5e9)),
            link_gb_s=float(rng.choice([15.8, 31.5, 63.0, 150.0, 450.0])),
            throughput=1.0,
        )
        cases.append(case)
    measured = scaling.predict_cases(truth, cases)
    return [
        Case(c.single_step_s, c.batch, c.devices, c.gradient_bytes, c.link_gb_s, float(m))
        for c, m in zip(cases, measured, strict=True)
    ]


def test_the_fit_recovers_known_parameters_from_synthetic_data() -> None:
    truth = ScalingParams(link_efficiency=0.3, overlap=0.4, hop_s=5e-4)
    found = scaling.fit(_synthetic(truth))
    assert found.link_efficiency == pytest.approx(0.3, rel=0.05)
    assert found.overlap == pytest.approx(0.4, abs=0.03)
    assert math.log(found.hop_s) == pytest.approx(math.log(5e-4), abs=0.2)


def test_the_fit_refuses_no_data() -> None:
    with pytest.raises(InvalidInput, match="no multi-device cases"):
        scaling.fit([])


def test_the_shipped_fit_is_within_its_search_box() -> None:
    shipped = scaling.shipped()
    low, high = scaling.BOUNDS["link_efficiency"]
    assert low <= shipped.params.link_efficiency <= high
    assert 0.0 <= shipped.params.overlap <= 1.0
    assert shipped.band is None or shipped.band > 0
