"""The forward test's diagnosis (benchmarks/accuracy.py) reads a DRAM share off a part's speed-up over the
H100 only where bandwidth is all the catalog says differs between them."""

from __future__ import annotations

import math

from benchmarks.accuracy import _bandwidth_alone, _catalog


def test_the_h200_differs_from_the_h100_in_bandwidth_alone_and_the_b200_does_not() -> None:
    catalog = _catalog()
    ratio = _bandwidth_alone(catalog, "h200-sxm-141gb", "h100-sxm5-80gb")
    h200, h100 = catalog["h200-sxm-141gb"], catalog["h100-sxm5-80gb"]
    assert ratio is not None and h200.memory_bandwidth_gb_s and h100.memory_bandwidth_gb_s
    assert math.isclose(ratio, h200.memory_bandwidth_gb_s / h100.memory_bandwidth_gb_s) and ratio > 1.4
    assert _bandwidth_alone(catalog, "b200-sxm-180gb", "h100-sxm5-80gb") is None  # more SMs, other peaks
    assert _bandwidth_alone(catalog, "h100-pcie-80gb", "h100-sxm5-80gb") is None  # fewer SMs, less power
