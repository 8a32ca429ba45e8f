"""The split correction (app/perfmodel/split.py): a device's measurements read as a factor on the model's
host time and one on its device time, and a ratio carried to another step moved by what they say."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.perfmodel.model import combined
from app.perfmodel.split import Timed, fit

HOST_S = 0.02
"""A step's host time, the same at every batch (eager dispatch)."""


def measured(kind: str, host_factor: float, device_factor: float, devices: list[float]) -> list[Timed]:
    """Steps the model puts at HOST_S and each device time, measured with the two factors applied."""
    return [
        Timed(HOST_S, d, float(combined(np.asarray(HOST_S * host_factor), np.asarray(d * device_factor), kind)))
        for d in devices
    ]


@pytest.mark.parametrize("kind", ["gpu", "cpu"])
def test_both_factors_are_recovered_where_both_regimes_were_measured(kind: str) -> None:
    timed = measured(kind, 0.7, 1.5, [0.004, 0.01, 0.03, 0.1, 0.4])
    split = fit(timed, kind)
    assert math.exp(split.host) == pytest.approx(0.7, rel=0.03)
    assert math.exp(split.device) == pytest.approx(1.5, rel=0.03)


def test_one_regime_alone_holds_the_two_factors_together_at_its_ratio() -> None:
    timed = measured("gpu", 1.0, 1.5, [0.2, 0.4, 0.8])  # device-bound throughout
    split = fit(timed, "gpu")
    assert math.exp(split.device) == pytest.approx(1.5, rel=0.03)
    assert abs(split.host - split.device) < 0.1  # nothing measured the host: the tie holds it


def test_a_ratio_moves_from_a_host_bound_step_to_a_device_bound_one_by_the_factors_difference() -> None:
    split = fit(measured("gpu", 1.0, 1.5, [0.004, 0.01, 0.03, 0.1, 0.4]), "gpu")
    host_bound, device_bound = (HOST_S, 0.002), (HOST_S, 0.5)
    assert split.moved(host_bound, host_bound) == 0.0
    # measured where the host bounds the step (ratio about 1), asked where the device does (about 1/1.5)
    assert split.moved(host_bound, device_bound) == pytest.approx(-math.log(1.5), abs=0.03)
    assert split.ratio(*device_bound) == pytest.approx(-math.log(1.5), abs=0.03)
