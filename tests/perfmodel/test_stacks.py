"""Runtime stack factors: the geometric mean over devices of each runtime's ratio to eager fp32 on the
same device, batch and threads, with the devices' spread; a device never informs itself."""

from __future__ import annotations

import pytest

from app.contracts import Precision
from app.perfmodel.stacks import Measurement, stack_factors, without

FP32, INT8 = Precision.fp32, Precision.int8


def m(device: str, runtime: str, throughput: float, precision: Precision = FP32, batch: int = 8) -> Measurement:
    return Measurement(device, "cpu", runtime, precision, batch, 2, throughput)


def test_a_factor_is_the_geometric_mean_of_the_devices_ratios() -> None:
    factors = stack_factors(
        [
            m("a", "torch-eager", 10), m("a", "openvino", 20), m("a", "onnxruntime-cpu", 40, INT8),
            m("b", "torch-eager", 10), m("b", "openvino", 80),
            m("c", "openvino", 1000),  # no eager figure beside it: no ratio
            m("a", "torch-eager", 5, batch=1), m("a", "openvino", 10, batch=1),  # a's other batch: a ratio of 2
        ]
    )  # fmt: skip
    openvino = factors[("openvino", FP32, "cpu")]
    assert openvino.factor == pytest.approx((2 * 8) ** 0.5)  # a: 2 (both batches), b: 8
    assert openvino.devices == ("a", "b") and openvino.pairs == 3
    assert openvino.spread_pct == pytest.approx((8 - 2) / 2 / 4 * 100)
    assert factors[("onnxruntime-cpu", INT8, "cpu")].factor == pytest.approx(4.0)
    assert ("torch-eager", FP32, "cpu") not in factors


def test_without_a_device_its_own_ratios_are_gone() -> None:
    measured = [m("a", "torch-eager", 10), m("a", "openvino", 20), m("b", "torch-eager", 10)]
    assert stack_factors(without(measured, "a")) == {}
