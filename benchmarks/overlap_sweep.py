"""How the host/device overlap of the GPU model (app/perfmodel/model.py, ``OVERLAP``: the p of the
smooth max of host and device time) moves the errors on hwadvisor's reference runs and on the
published tests.

    .venv/bin/python -m benchmarks.overlap_sweep [--published]

For each p, eager PyTorch's host costs are measured again on the runs (app/perfmodel/host.py, from the
fit's dispatch and no autograd factor, as scripts/calibrate_perfmodel.py does), then: the model alone
on every run's results (mean absolute log error, and signed per kind of step), and the 90% quantiles
of the two bands the runs measure, ``gpu-transfer``'s errors (a part predicted from another part's
run) and ``gpu-between``'s (a run's part between its batches, from another machine's run).
``--published`` also reruns benchmarks.accuracy's leave-one-GPU-out and forward-in-time tests at each p
(about 20 s each). The shipped p is 4 (docs/ACCURACY.md, "Between a run's batches").
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace

from app.catalog import load, reference
from app.contracts import Task
from app.perfmodel import bands, host, model, references
from app.perfmodel.params import shipped as calibration
from benchmarks import accuracy
from benchmarks.reference_check import fitted_dispatch

OVERLAPS = (1.0, 1.5, 2.0, 3.0, 4.0, 8.0)
KINDS: dict[str, Callable[[references.Point], bool]] = {
    "infer batch 1": lambda p: p.config[1] is Task.infer and p.config[3] == 1,
    "infer between": lambda p: p.config[1] is Task.infer and 1 < p.config[3] < 256,
    "infer batch 256": lambda p: p.config[1] is Task.infer and p.config[3] == 256,
    "train": lambda p: p.config[1] is Task.train,
}


def _signed(errors: Sequence[float]) -> str:
    return f"{statistics.fmean(map(abs, errors)):.3f} ({math.exp(statistics.fmean(errors)) - 1:+.0%})"


def _quantile(errors: Sequence[bands.Error]) -> str:
    band = bands.quantile([abs(e.value) for e in errors])
    return "-" if band is None else f"{band:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--published", action="store_true", help="rerun benchmarks.accuracy's GPU tests at each p")
    args = parser.parse_args()
    found = references.points(reference.shipped(), {e.id: e for e in load()})
    fitted = replace(host.with_dispatch(calibration().of("gpu"), fitted_dispatch()), autograd=1.0)
    shipped = model.OVERLAP
    try:
        for overlap in OVERLAPS:
            model.OVERLAP = overlap
            params = host.measured(found, fitted)
            errors = references.log_errors(found, params)
            kinds = ", ".join(
                f"{kind} {_signed([e for p, e in zip(found, errors, strict=True) if keep(p)])}"
                for kind, keep in KINDS.items()
            )
            print(
                f"p {overlap:g}: dispatch {params['dispatch_eager_s'] * 1e6:.1f} us, autograd {params.autograd:.2f}; "
                f"model alone {statistics.fmean(map(abs, errors)):.3f} ({kinds}); band quantiles: transfer "
                f"{_quantile(references.transfer_errors(found, params))}, between "
                f"{_quantile(references.between_errors(found, params))}"
            )
            if args.published:
                lines: list[str] = []
                accuracy.main([], out=lines.append)
                tests = [line for line in lines if line.startswith("performance model")][:2]
                print("  published (leave one GPU out; forward in time): " + " | ".join(tests))
    finally:
        model.OVERLAP = shipped


if __name__ == "__main__":
    main()
