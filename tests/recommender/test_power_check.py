"""benchmarks/power_check.py: the modelled draw against the reference runs' NVML readings."""

from __future__ import annotations

import statistics

from benchmarks import power_check


def _mean_abs(rows: list[tuple[float, dict[str, float]]], way: str) -> float:
    return statistics.mean(abs(ways[way] / measured - 1) for measured, ways in rows)


def test_the_calibrated_utilisation_draws_closer_to_what_the_reference_runs_read() -> None:
    found = power_check.draws()
    assert {"all", "batch 1", "batch 2-32", "batch 33+", "h100-sxm5-80gb", "h200-sxm-141gb"} <= set(found)
    assert len(found["all"]) > 700
    # where the device bounds the step, the figure's own utilisation is what the power model was fitted on
    for group in ("all", "batch 33+"):
        assert _mean_abs(found[group], "calibrated") < _mean_abs(found[group], "model") < _mean_abs(found[group], "tdp")
    printed: list[str] = []
    power_check.main([], out=printed.append)
    assert printed[0].startswith("| rows | n | tdp") and printed[2].startswith("| all | ")
