"""How well the data-parallel scaling model predicts Lambda's 2x/4x/8x training rows, against the
naive "N x one GPU" baseline, in the same run.

    .venv/bin/python -m benchmarks.scaling_accuracy [--markdown] [--datasets ../shared/datasets]

1. Leave one config out over Lambda 2022 and 2024's 2x/4x/8x rows (workloads with a zoo counterpart,
   fp32 column = TF32 on Ampere and newer, and fp16): the scaling model's three parameters
   (app/perfmodel/scaling.py) are fitted on every other config, then predict the held-out one.
   Two ways to get the single-GPU step:
   a. measured: the same dataset's 1-GPU row of the part (same host where there is one), at the
      config's per-GPU batch (per-GPU throughput taken as independent of the batch);
   b. modelled: the performance model calibrated on Lambda's 1-GPU rows of every *other* part
      (leave one part out, app/perfmodel/calibrate.py), so the part is unseen twice over.
   Baselines: N x the measured 1-GPU throughput, and N x the modelled one.
2. Forward in time: parameters fitted on all of Lambda 2022 and 2024 predict Lambda's 2025 rerun
   (v2_2025: H100 SXM5, H200, B200; hosts merged at their median), never fitted on.
Bands: each prediction's band is the 90% quantile of the absolute log errors of the *other* configs'
held-out predictions (split conformal, app/perfmodel/bands.py); forward predictions get the band of
all leave-one-config-out errors. Baselines get bands the same way, so coverage compares too.
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.catalog import CatalogHardware, load
from app.catalog.published import shipped as published_results
from app.contracts import Task
from app.perfmodel import bands, scaling
from app.perfmodel.calibrate import Fit, Observation, fit, predict
from app.perfmodel.device import device
from app.perfmodel.observations import from_public, group_of, median_per_part
from app.perfmodel.predict import profile_of
from benchmarks.accuracy import Outcome, summary, table
from benchmarks.lambda_multi import MultiRow, forward, published

ROOT = Path(__file__).resolve().parents[1]
FITTED_ON = ("v0_2022", "v1_2024")
SINGLE_SOURCES = ("public:lambda-2022", "public:lambda-2024")


@dataclass(frozen=True, slots=True)
class Predicted:
    """One row's predictions: the scaling model and the naive baseline, from one single-GPU figure."""

    row: MultiRow
    model: float
    naive: float


def case_of(row: MultiRow, catalog: Mapping[str, CatalogHardware], single: float) -> scaling.Case:
    """The row as the scaling fit sees it, with ``single`` samples/s of one device."""
    link = scaling.link_of(catalog[row.part], row.devices, bridged=row.bridged)
    return scaling.Case(
        single_step_s=row.batch / single,
        batch=row.batch,
        devices=row.devices,
        gradient_bytes=scaling.gradient_bytes(row.profile),
        link_gb_s=link.gb_s,
        throughput=row.throughput,
    )


def measured_cases(rows: Sequence[MultiRow], catalog: Mapping[str, CatalogHardware]) -> list[scaling.Case]:
    """What the parameters are fitted on: rows with a measured 1-GPU reference."""
    return [case_of(r, catalog, r.single) for r in rows if r.single is not None]


def _predict(
    rows: Sequence[MultiRow],
    catalog: Mapping[str, CatalogHardware],
    params: scaling.ScalingParams,
    single: Callable[[MultiRow], float | None],
) -> list[Predicted]:
    out = []
    for r in rows:
        one = single(r)
        if one is None:
            continue
        model = float(scaling.predict_cases(params, [case_of(r, catalog, one)])[0])
        out.append(Predicted(r, model, r.devices * one))
    return out


def leave_one_config_out(
    rows: Sequence[MultiRow],
    catalog: Mapping[str, CatalogHardware],
    single: Callable[[MultiRow], float | None],
) -> list[Predicted]:
    """Each config's rows predicted with parameters fitted on every other config's measured rows."""
    configs = sorted({(r.version, r.config) for r in rows})
    out: list[Predicted] = []
    for held in configs:
        rest = [r for r in rows if (r.version, r.config) != held]
        params = scaling.fit(measured_cases(rest, catalog))
        out += _predict([r for r in rows if (r.version, r.config) == held], catalog, params, single)
    return out


def measured(row: MultiRow) -> float | None:
    return row.single


class ModelSingle:
    """The performance model's 1-GPU throughput at a row's per-GPU batch, calibrated on Lambda's
    1-GPU rows (without the row's part when ``leave_out``), with the row's source stack factor."""

    def __init__(self, catalog: Mapping[str, CatalogHardware], *, leave_out: bool, source: str | None = None) -> None:
        self.catalog = catalog
        self.leave_out = leave_out
        self.source = source
        rows = [r for r in published_results() if r.source in SINGLE_SOURCES and r.devices == 1]
        self.observations = median_per_part(from_public(rows, catalog, profile_of))
        self.fits: dict[str | None, Fit] = {}

    def _fit(self, part: str) -> Fit:
        key = part if self.leave_out else None
        if key not in self.fits:
            self.fits[key] = fit([o for o in self.observations if o.device.id != key], "gpu")
        return self.fits[key]

    def __call__(self, row: MultiRow) -> float | None:
        dev = device(self.catalog[row.part], row.precision)
        if dev is None:
            return None
        source = self.source or row.source
        o = Observation(
            profile=row.profile,
            batch=row.batch,
            device=dev,
            throughput=1.0,
            runtime="pytorch-ngc",
            group=group_of(source, row.workload, Task.train, row.precision),
            label=row.label,
        )
        return float(predict(self._fit(row.part), [o])[0])


def outcomes(predicted: Sequence[Predicted], *, naive: bool = False, band: float | None = None) -> list[Outcome]:
    """Each prediction with its band: ``band`` when given (forward), else the 90% quantile of the
    other configs' absolute log errors (split conformal)."""

    def value(p: Predicted) -> float:
        return p.naive if naive else p.model

    errors = [((p.row.version, p.row.config), abs(math.log(value(p) / p.row.throughput))) for p in predicted]
    out = []
    for p in predicted:
        mine = (p.row.version, p.row.config)
        allowed = band if band is not None else bands.quantile([e for c, e in errors if c != mine])
        out.append(
            Outcome(p.row.label, f"{p.row.version} {p.row.config}", p.row.key, p.row.throughput, value(p), allowed)
        )
    return out


def band_of(found: Sequence[Outcome]) -> float | None:
    """The 90% quantile of the absolute log errors: the band a new prediction gets."""
    return bands.quantile([abs(math.log(o.predicted / o.measured)) for o in found])


Bands = dict[str, tuple[float | None, float | None]]
"""Per variant of the 1-GPU figure: the scaling model's band and the naive baseline's."""


def report(
    out: Callable[[str], None],
    markdown: bool,
    title: str,
    pairs: Sequence[tuple[str, list[Predicted]]],
    given: Bands | None = None,
) -> Bands:
    """Print each variant's model and baseline summaries (and tables); return their bands. With
    ``given`` bands (forward) every prediction gets its variant's band; else conformal per config."""
    out(title)
    found: Bands = {}
    for name, predicted in pairs:
        model_band, naive_band = given.get(name, (None, None)) if given is not None else (None, None)
        model = outcomes(predicted, band=model_band)
        naive = outcomes(predicted, naive=True, band=naive_band)
        out(summary(f"scaling model on the {name} 1-GPU throughput", model))
        out(summary(f"naive N x the {name} 1-GPU throughput", naive))
        found[name] = (band_of(model), band_of(naive))
        if markdown:
            for what, found_outcomes in ((f"Scaling model, {name} 1-GPU", model), (f"Naive N x {name} 1-GPU", naive)):
                out("")
                out(f"{what}: signed error per config (* outside the band)")
                out("")
                out(table(found_outcomes))
            out("")
    return found


def splits(out: Callable[[str], None], predicted: Sequence[Predicted], catalog: Mapping[str, CatalogHardware]) -> None:
    """Model and baseline side by side per link kind and GPU count: where the all-reduce matters."""

    def kind(p: Predicted) -> str:
        return scaling.link_of(catalog[p.row.part], p.row.devices, bridged=p.row.bridged).kind

    groups = [(f"{k} rings", [p for p in predicted if kind(p) == k]) for k in ("nvlink", "pcie")]
    groups += [(f"{n} GPUs", [p for p in predicted if p.row.devices == n]) for n in (2, 4, 8)]
    for name, group in groups:
        if not group:
            continue
        model = [abs(p.model / p.row.throughput - 1) * 100 for p in group]
        naive = [abs(p.naive / p.row.throughput - 1) * 100 for p in group]
        out(
            f"  {name}: {len(group)} rows, scaling model mean {statistics.fmean(model):.1f}% "
            f"(median {statistics.median(model):.1f}%), naive mean {statistics.fmean(naive):.1f}% "
            f"(median {statistics.median(naive):.1f}%)"
        )


Fitter = Callable[[Sequence[MultiRow]], Callable[[MultiRow], scaling.ScalingParams]]
Loss = Literal["squared", "absolute"]


def shared(loss: Loss) -> Fitter:
    """One set of parameters for every link (``loss``: squared or absolute log error)."""

    def fitter(rows: Sequence[MultiRow]) -> Callable[[MultiRow], scaling.ScalingParams]:
        params = scaling.fit(measured_cases(rows, catalog_by_id()), loss=loss)
        return lambda _row: params

    return fitter


def per_link(loss: Loss) -> Fitter:
    """A set of parameters per link kind (NVLink, PCIe), each fitted on that kind's rows."""

    def fitter(rows: Sequence[MultiRow]) -> Callable[[MultiRow], scaling.ScalingParams]:
        catalog = catalog_by_id()
        fitted = {
            kind: scaling.fit(measured_cases([r for r in rows if _kind(r, catalog) == kind], catalog), loss=loss)
            for kind in ("nvlink", "pcie")
        }
        return lambda row: fitted[_kind(row, catalog)]

    return fitter


def _kind(row: MultiRow, catalog: Mapping[str, CatalogHardware]) -> str:
    return scaling.link_of(catalog[row.part], row.devices, bridged=row.bridged).kind


@functools.cache
def catalog_by_id() -> dict[str, CatalogHardware]:
    return {e.id: e for e in load()}


def alternatives(out: Callable[[str], None], rows: Sequence[MultiRow], ahead: Sequence[MultiRow]) -> None:
    """Leave one config out (and forward, for the record) for other ways to fit the parameters, on the
    measured 1-GPU throughput, with the shipped way first: what the choice of the shipped one rests on."""
    catalog = catalog_by_id()
    ways = {
        "one set, squared log error (shipped)": shared("squared"),
        "one set per link kind, squared log error": per_link("squared"),
        "one set, absolute log error": shared("absolute"),
        "one set per link kind, absolute log error": per_link("absolute"),
    }
    out("# Ways to fit the scaling parameters: leave one config out on the measured 1-GPU throughput")
    configs = sorted({(r.version, r.config) for r in rows})
    for name, fitter in ways.items():
        errors: list[tuple[str, float]] = []
        for held in configs:
            params_of = fitter([r for r in rows if (r.version, r.config) != held])
            for r in rows:
                if (r.version, r.config) == held and r.single is not None:
                    model = float(scaling.predict_cases(params_of(r), [case_of(r, catalog, r.single)])[0])
                    errors.append((_kind(r, catalog), model / r.throughput - 1))
        params_of = fitter(rows)
        forward_errors = [
            float(scaling.predict_cases(params_of(r), [case_of(r, catalog, r.single)])[0]) / r.throughput - 1
            for r in ahead
            if r.single is not None
        ]
        by_kind = ", ".join(
            f"{kind} {100 * statistics.fmean(abs(e) for k, e in errors if k == kind):.1f}%"
            for kind in ("nvlink", "pcie")
        )
        out(
            f"  {name}: mean {100 * statistics.fmean(abs(e) for _, e in errors):.1f}% "
            f"(median {100 * statistics.median(abs(e) for _, e in errors):.1f}%; {by_kind}); forward "
            f"{100 * statistics.fmean(abs(e) for e in forward_errors):.1f}%, signed "
            f"{100 * statistics.fmean(forward_errors):+.1f}%"
        )


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="also print per-config tables")
    parser.add_argument("--alternatives", action="store_true", help="also compare other ways to fit the parameters")
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = parser.parse_args(argv)
    if not (args.datasets / "lambda-dl-benchmark").is_dir():
        parser.error(f"no lambda-dl-benchmark folder in {args.datasets}: pass --datasets /path/to/shared/datasets")
    catalog = {e.id: e for e in load()}
    rows = [r for version in FITTED_ON for r in published(args.datasets, catalog, version)]

    params = scaling.fit(measured_cases(rows, catalog))
    out(
        f"# Fitted on every Lambda 2022 and 2024 multi-GPU config ({len(measured_cases(rows, catalog))} rows): "
        f"link efficiency {params.link_efficiency:.3f}, overlap {params.overlap:.2f}, "
        f"hop {params.hop_s * 1e6:.0f} us"
    )
    out("")
    loco = [
        ("measured", leave_one_config_out(rows, catalog, measured)),
        ("modelled", leave_one_config_out(rows, catalog, ModelSingle(catalog, leave_out=True))),
    ]
    found = report(
        out, args.markdown, "# Leave one config out, Lambda 2022 and 2024 2x/4x/8x (fitted on the other configs)", loco
    )
    out("Split of the measured-1-GPU predictions above (absolute errors):")
    splits(out, loco[0][1], catalog)

    ahead = forward(args.datasets, catalog)
    out("")
    model_single = ModelSingle(catalog, leave_out=False, source="public:lambda-2024")
    pairs = [
        ("measured", _predict(ahead, catalog, params, measured)),
        ("modelled", _predict(ahead, catalog, params, model_single)),
    ]
    report(
        out,
        args.markdown,
        "# Forward in time: Lambda v2_2025 2x/4x/8x predicted from Lambda 2022 and 2024",
        pairs,
        found,
    )
    if args.alternatives:
        out("")
        alternatives(out, rows, ahead)


if __name__ == "__main__":
    main()
