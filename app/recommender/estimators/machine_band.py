"""The machine band of a measured figure that stands for another machine than its own: a reference
run's, or a lab device's asked for a catalog part (app/recommender/estimators/measured.py and
interpolated.py). Its width is the ``machine`` band of the step's regime (app/perfmodel/bands.py,
scripts/calibrate_perfmodel.py): how far machines of one part measured one config apart."""

from __future__ import annotations

from typing import NamedTuple

from app.perfmodel.bands import as_pct
from app.perfmodel.predict import Ask, answer, machine_band
from app.recommender.estimators.base import Evidence
from app.recommender.evidence import LAB, REFERENCE, Hardware, Point


class Machines(NamedTuple):
    """How far another machine with the part measures a figure: the band (percent) and the regime it
    was measured in (``host`` or ``device``)."""

    pct: float
    regime: str


def machines(hardware: Hardware, p: Point, evidence: Evidence) -> Machines | None:
    """The ``machine`` band of ``p``'s step's regime as the model sees it (scripts/calibrate_perfmodel.py
    measures both), where ``p`` stands for another machine than its own: a reference run's point, or a lab
    device's answering for a catalog part. None for a lab device's own figure, a published row, or where
    the calibration measured no such band (CPUs)."""
    ask = step(hardware, p)
    if ask is None:
        return None
    found = answer(evidence.workload, evidence.task, ask)
    if found is None:
        return None
    band = machine_band(found.band_kind, found.regime)
    return Machines(as_pct(band), found.regime) if band else None


def for_another(hardware: Hardware, source: str) -> bool:
    """Whether a figure of ``source`` answering for ``hardware`` stands for another machine than its own."""
    return source.startswith(REFERENCE) or (source == LAB and not hardware.ref.owned)


def step(hardware: Hardware, p: Point) -> Ask | None:
    """The model's step whose regime sets ``p``'s machine band, where ``p`` stands for another machine."""
    spec = p.hardware.spec
    if spec is None or not for_another(hardware, p.source):
        return None
    return Ask(p.precision, p.batch_size, spec, p.runtime)
