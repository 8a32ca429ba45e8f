"""Error bands that hold the truth about 90% of the time: split conformal prediction.

A band is the ``COVERAGE`` quantile of the absolute log errors the same kind of estimate made on
data it was not calibrated on (leave one part out), with the finite-sample correction: among ``n``
past errors, the ceil((n + 1) * 0.9)-th smallest. If the future errors are exchangeable with the
past ones, the truth falls inside with probability at least 90%. The band is symmetric in log
space: a band of 0.2 means from predicted / e^0.2 to predicted x e^0.2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

COVERAGE = 0.9


def quantile(errors: Sequence[float], coverage: float = COVERAGE) -> float | None:
    """The band (absolute log error) from past out-of-sample errors; None with too few to say."""
    ordered = sorted(errors)
    n = len(ordered)
    rank = math.ceil((n + 1) * coverage)
    if n == 0 or rank > n:
        return None
    return ordered[rank - 1]


def as_pct(band: float) -> float:
    """The band as a percentage of the prediction (the wider, upper side)."""
    return (math.exp(band) - 1.0) * 100.0


HOST_SHARE = 0.5
"""A step is *host-bound* for its band when the model puts the host's time at half the device's or more.
Where the host bounds the step, the same part on two machines measures up to 2.4x apart (the host's CPU,
its clock and its driver set the pace); where the GPU does, within a few percent: one quantile over both
is too narrow for the first and far too wide for the second. So each band the reference runs measure is
also measured per regime, a Mondrian split of the same out-of-sample errors (scripts/calibrate_perfmodel.py);
the threshold is a round value, its neighbours' quantiles are in docs/ACCURACY.md."""


def regime(host_s: float, device_s: float) -> str:
    """``host`` or ``device``: which of the two bounds a step for the bands (``HOST_SHARE``)."""
    return "host" if host_s >= HOST_SHARE * device_s else "device"


def in_regime(name: str, which: str) -> str:
    """The name of band ``name`` measured on the steps of one regime alone (``gpu-between-host``)."""
    return f"{name}-{which}"


class Error(NamedTuple):
    """One out-of-sample error: log(estimated / measured), and the regime the model puts the measured
    step in (``host`` or ``device``)."""

    value: float
    regime: str
