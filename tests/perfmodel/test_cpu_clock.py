"""benchmarks/cpu_clock.py: the chain measures a clock a core can hold, on every x86 core it runs on
(Golden Cove and later fold adds of a constant at rename: that chain read 15.3 GHz on a Xeon with AMX)."""

from __future__ import annotations

import platform
import shutil

import pytest

from benchmarks import cpu_clock


@pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler to build the chain"
)
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the chain is x86 assembly")
def test_the_chain_reads_a_clock_a_core_can_hold() -> None:
    (rate,) = cpu_clock.measure(rounds=1)
    assert 0.5 < rate <= cpu_clock.MAX_GHZ
