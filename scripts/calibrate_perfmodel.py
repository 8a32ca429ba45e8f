"""Calibrate the performance model and write app/perfmodel/data/params.json.

    python scripts/calibrate_perfmodel.py [--out DIR]

Fits the model's parameters (app/perfmodel/model.py) for GPUs on the Lambda 2022 and 2024
single-GPU training results shipped in app/catalog/data/public_results.csv, and for CPUs on the
OpenVINO CPU results, with a stack factor per published source and workload; on CPUs also on the
absolute figures of the lab CPUs that ran eager PyTorch and ONNX Runtime on the same configs, which
set the CPU model's level (app/perfmodel/lab_levels.py), and their ratios the eager kernel factors
(convolutions, GEMMs, each also on AMX's tiles; app/perfmodel/data/cpu_runtime_pairs.json,
app/perfmodel/runtime_pairs.py). Then measures the bands: every part is predicted by the model fitted
without it (leave one part out), and the 90%
quantile of those errors is each kind's band (app/perfmodel/bands.py). ``gpu``/``cpu``: with the
source's stack factor; ``*-uncalibrated``: without any, what a prediction for a stack nothing
calibrated (the lab's eager runs on a kind of device it has not measured) can be off by; ``cpu-lab``:
eager PyTorch or ONNX Runtime on a CPU the lab has not measured, each lab machine's figures predicted
by the level the others set (app/perfmodel/lab_levels.py).

hwadvisor's own reference runs (app/catalog/data/reference/, eager PyTorch on GPUs it was lent) are
not in the fit. They set the numbers the published runs cannot see, eager PyTorch's host costs
(app/perfmodel/host.py): the GPU's ``dispatch_eager_s`` (written over the fitted one) and the autograd
factor; the eager stream rate, from the configs two parts measured (app/perfmodel/stream.py), after which
the host costs are measured again; and, with them, measure more kinds of error (app/perfmodel/references.py).
``gpu-transfer``: a part predicted as the recommender does for a GPU no run measured, the model's
ratio between it and a reference run's part times that run's measurement
(app/recommender/estimators/modelled.py, ``lab_correction``), each run predicted from each other run
of its vendor. ``gpu-uncalibrated`` also takes the model alone's errors on those
runs. Each is the wider of its quantile and the leave-one-out band it stands beside: two GPUs of one
architecture cannot show how far the transfer errs across architectures. ``gpu-between``: a run's own
part at a batch between those it measured, the model times the run's ratio drawn between its batches
(``at_batch``), each result predicted from another machine's run of that part (leave one batch out,
``references.between_errors``); its own quantile, the part being the run's. ``gpu-beyond``: a batch
more than ``references.BEYOND_NEAR`` times beyond every batch a run measured, the model times the run's
ratio at the nearest (not extrapolated), each result predicted from its own run's other batches
(``references.beyond_errors``). ``gpu-twin``: fp16 calibrated by bf16 measurements or the other way
round, where nothing measured the precision asked, each 16-bit result predicted from another machine's
run at its twin (``references.twin_errors``), no narrower than the leave-one-out band. ``gpu-machine``: a run's
figure standing for its part, against what another machine with the part measured of the same config
(``references.machine_errors``), with the published rows of one part's several systems at one config
(``observations.system_errors``: Lambda's six H100 SXM hosts) beside them. Each band is also measured
per regime (``gpu-between-host``, ``gpu-between-device``: the steps the model puts on the host, or on
the GPU, app/perfmodel/bands.py).

Nothing from Lambda's 2025 rerun (v2_2025) or DESIGN.md's H100 figures is read: they are tests.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from app.catalog import load, reference
from app.catalog.published import shipped as published
from app.perfmodel import bands, host, lab_levels, references, stream
from app.perfmodel.calibrate import Observation, fit, leave_one_part_out
from app.perfmodel.model import PARAMETERS, Params
from app.perfmodel.observations import from_public, median_per_part, system_errors
from app.perfmodel.predict import profile_of
from app.perfmodel.runtime_pairs import on_tiles
from app.perfmodel.runtime_pairs import shipped as runtime_pairs

ROOT = Path(__file__).resolve().parents[1]
REGIMES = ("host", "device")
SOURCES = {
    "gpu": ("public:lambda-2022", "public:lambda-2024"),
    "cpu": ("public:openvino-2024.1",),
}


def published_systems(kind: str) -> list[Observation]:
    """The published rows the model can use, each system apart."""
    catalog = {e.id: e for e in load()}
    rows = [r for r in published() if r.source in SOURCES[kind]]
    return [o for o in from_public(rows, catalog, profile_of) if o.device.kind == kind]


def calibrate() -> dict[str, object]:
    params: dict[str, dict[str, float]] = {}
    stacks: dict[str, float] = {}
    traffic: dict[str, float] = {}
    found_bands: dict[str, float] = {}
    counts: dict[str, int] = {}
    eager: dict[str, float] = {}
    eager_conv: dict[str, float] = {}
    tile_conv: dict[str, float] = {}
    tile_kernel: dict[str, float] = {}
    measured_autograd: dict[str, float] = {}
    measured_stream: dict[str, float] = {}
    fitted_dispatch: dict[str, float] = {}
    for kind in ("gpu", "cpu"):
        systems_seen = published_systems(kind)
        seen = median_per_part(systems_seen)  # what the fit reads: a part's systems at one config once
        counts[kind] = len(seen)
        if not seen:
            continue
        if kind == "cpu":  # the level from the lab CPUs' own figures, the eager kernel factors from their pairs
            machines, catalog = runtime_pairs().machines, load()
            fitted = lab_levels.calibrated(seen, machines, catalog)
            eager[kind], eager_conv[kind] = _round(fitted.params.eager_kernel), _round(fitted.params.eager_conv)
            if fitted.params.eager_conv_tile is not None:
                tile_conv[kind] = _round(fitted.params.eager_conv_tile)
            if fitted.params.eager_kernel_tile is not None:
                tile_kernel[kind] = _round(fitted.params.eager_kernel_tile)
            tiled = [on_tiles(p, m.parts(catalog)) for m in machines for p in m.pairs]
            counts["cpu-lab"] = 2 * tiled.count(False)  # the level's figures: eager and graph of each pair
            counts["cpu-lab-tiles"] = tiled.count(True)  # the pairs on tile units: the eager tile factors
            held = lab_levels.leave_one_part_out(seen, machines, catalog, fitted, only=SOURCES[kind][0])
            level = lab_levels.leave_one_machine_out(seen, machines, catalog)
            band = bands.quantile([abs(math.log(f.predicted / f.measured)) for f in level])
            if band is not None:
                found_bands[lab_levels.BAND] = _round(band)
        else:
            fitted = fit(seen, kind)
            held = leave_one_part_out(seen, kind)
        params[kind] = {p: _round(fitted.params[p]) for p in PARAMETERS}
        stacks.update({g: _round(v) for g, v in fitted.stacks.items()})
        traffic.update({g: _round(v) for g, v in fitted.traffic.items()})
        for name, errors in (
            (kind, [abs(math.log(h.predicted / h.observation.throughput)) for h in held]),
            (f"{kind}-uncalibrated", [abs(math.log(h.unstacked / h.observation.throughput)) for h in held]),
        ):
            band = bands.quantile(errors)
            if band is not None:
                found_bands[name] = _round(band)
        if kind == "gpu":
            found = references.points(reference.shipped(), {e.id: e for e in load()})
            shipped_params = host.measured(found, fitted.params)
            rate = stream.measured(found, shipped_params)
            if rate is not None:  # the host costs again, on steps whose kernels now stream at the rate
                shipped_params = host.measured(found, stream.with_stream(shipped_params, rate))
                measured_stream[kind] = _round(rate)
            if shipped_params["dispatch_eager_s"] != fitted.params["dispatch_eager_s"]:
                fitted_dispatch[kind] = params[kind]["dispatch_eager_s"]
                params[kind]["dispatch_eager_s"] = _round(shipped_params["dispatch_eager_s"])
            if shipped_params.autograd != fitted.params.autograd:
                measured_autograd[kind] = _round(shipped_params.autograd)
            systems = system_errors(systems_seen, shipped_params, fitted.traffic)
            found_bands.update(reference_bands(found, systems, shipped_params, found_bands))
    return {
        "generated_by": "scripts/calibrate_perfmodel.py",
        "params": params,
        "stacks": dict(sorted(stacks.items())),
        "traffic": dict(sorted(traffic.items())),
        "bands": dict(sorted(found_bands.items())),
        "eager_kernel": eager,
        "eager_conv": eager_conv,
        "eager_conv_tile": tile_conv,
        "eager_kernel_tile": tile_kernel,
        "autograd": measured_autograd,
        "stream": measured_stream,
        "fitted_dispatch": fitted_dispatch,
        "observations": counts,
    }


def reference_bands(
    found: list[references.Point], systems: list[bands.Error], params: Params, published: dict[str, float]
) -> dict[str, float]:
    """The bands the reference runs measure, each over all its errors and per regime (host- or
    device-bound, app/perfmodel/bands.py): the model alone's, the transfer's and the twin's no narrower
    than the leave-one-out band beside them, the between and beyond bands their own, the machine band
    with the published sources' ``systems`` of one part beside the runs' machines."""
    found_bands: dict[str, float] = {}
    for name, errors, beside in (
        ("gpu-uncalibrated", references.model_errors(found, params), "gpu-uncalibrated"),
        ("gpu-transfer", references.transfer_errors(found, params), "gpu"),
        ("gpu-twin", references.twin_errors(found, params), "gpu"),
        ("gpu-between", references.between_errors(found, params), None),
        ("gpu-beyond", references.beyond_errors(found, params), None),
        ("gpu-machine", references.machine_errors(found, params) + systems, None),
    ):
        for band_name, chosen in (
            (name, errors),
            *((bands.in_regime(name, which), [e for e in errors if e.regime == which]) for which in REGIMES),
        ):
            band = bands.quantile([abs(e.value) for e in chosen])
            if band is None or (beside is not None and beside not in published):
                continue
            found_bands[band_name] = _round(max(band, published[beside]) if beside is not None else band)
    return found_bands


def _round(value: float) -> float:
    return float(f"{value:.4g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "app" / "perfmodel" / "data")
    args = parser.parse_args()
    result = calibrate()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "params.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}: {result['observations']} observations, bands {result['bands']}")


if __name__ == "__main__":
    main()
