"""How the split of the reference runs' bands into host- and device-bound steps (app/perfmodel/bands.py,
``HOST_SHARE``) moves each band.

    .venv/bin/python -m benchmarks.regime_sweep

For each threshold (a step is host-bound where the model puts the host's time at that share of the
device's or more), the errors scripts/calibrate_perfmodel.py measures on hwadvisor's reference runs with
the shipped parameters: the model alone's (``gpu-uncalibrated``), the transfer's (a part predicted from
another part's run), the between band's (a run's part between its batches, from another machine's run)
and the machine band's (a run's figure against another machine's of the same config). Per regime: how
many errors and their 90% quantile, raw (the shipped uncalibrated and transfer bands are no narrower
than the leave-one-GPU-out band beside them). The shipped threshold is 0.5; docs/ACCURACY.md quotes this.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from app.catalog import load, reference
from app.perfmodel import bands, references
from app.perfmodel.model import Params
from app.perfmodel.params import shipped as calibration

SHARES = (0.25, 0.5, 0.75, 1.0, 2.0)
ERRORS: dict[str, Callable[[Sequence[references.Point], Params], list[bands.Error]]] = {
    "uncalibrated": references.model_errors,
    "transfer": references.transfer_errors,
    "between": references.between_errors,
    "machine": references.machine_errors,
}


def _quantile(errors: Sequence[bands.Error], which: str) -> str:
    chosen = [abs(e.value) for e in errors if e.regime == which]
    band = bands.quantile(chosen)
    return f"{which} {len(chosen):>3} {'-' if band is None else f'{band:.3f}':>5}"


def main() -> None:
    parts = {e.id: e for e in load()}
    found = references.points(reference.shipped(), parts)
    params = calibration().of("gpu")
    shipped = bands.HOST_SHARE
    try:
        for share in SHARES:
            bands.HOST_SHARE = share
            made = {name: errors(found, params) for name, errors in ERRORS.items()}
            cells = "; ".join(
                f"{name}: {_quantile(errors, 'host')}, {_quantile(errors, 'device')}" for name, errors in made.items()
            )
            print(f"host share {share:g}: {cells}")
    finally:
        bands.HOST_SHARE = shipped


if __name__ == "__main__":
    main()
