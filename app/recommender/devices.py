"""What ``device_count`` devices give together: N times one device for inference (independent
copies), and for training the data-parallel scaling model (app/perfmodel/scaling.py: one device's
step plus the gradient all-reduce it cannot hide, over the part's NVLink or PCIe inside one system;
docs/PLANNING.md). A row whose gradient size or link is unknown (no profile of the workload, a CPU)
keeps N times one device, and the answer's notes say so. The lab's own data-parallel runs calibrate
the links they crossed, and a config the lab measured on N devices takes its measured efficiency
(app/perfmodel/lab_scaling.py)."""

from __future__ import annotations

import numpy as np

from app.contracts import Precision, Task, WorkloadSpec
from app.perfmodel import custom, scaling
from app.perfmodel.lab_scaling import link_key
from app.perfmodel.predict import profile_of
from app.recommender.columns import PRECISIONS, Columns, Floats, Ints


def modelled(spec: WorkloadSpec) -> bool:
    """Whether the devices are modelled (training on several) rather than multiplied."""
    return spec.constraints.device_count > 1 and spec.task is Task.train


class Together:
    """Samples/s of ``device_count`` devices for rows of one ask's table. Each row's batch, gradient
    bytes and link are read once per ask (a ranking asks for every row, then for each listed one)."""

    def __init__(self, spec: WorkloadSpec, table: Columns) -> None:
        self.n = spec.constraints.device_count
        self.modelled = modelled(spec)
        if not self.modelled:
            return
        per_precision = np.array([_gradient_bytes(spec, p) for p in PRECISIONS], dtype=np.float64)
        self.gradient = per_precision[table.precision_index]
        links = [scaling.ring_link(h.spec, self.n) for h in table.hardware]
        self.gb_s = np.array([np.nan if link is None else link.gb_s for link in links])[table.hardware_index]
        self.batch = np.array([o.config.batch_size for o in table.options], dtype=np.float64)
        self.params = scaling.shipped().params
        self._lab(spec, table, links)

    def _lab(self, spec: WorkloadSpec, table: Columns, links: list[scaling.Link | None]) -> None:
        """The lab's data-parallel runs: a factor on each part's link, and the configs it measured itself."""
        lab = table.lab_scaling
        keys = [
            None if link is None or h.spec is None else link_key(link, part=h.spec.id)
            for h, link in zip(table.hardware, links, strict=True)
        ]
        factors = [lab.factor(key) if key is not None else None for key in keys]
        self.factor = np.array([f.factor if f is not None else 1.0 for f in factors])[table.hardware_index]
        self.measured = np.full(len(table), np.nan)
        if spec.custom is not None or not lab.efficiencies:
            return
        for i, o in enumerate(table.options):
            key = keys[int(table.hardware_index[i])]
            found = (
                None if key is None else lab.measured(key, spec.name, o.config.precision, o.config.batch_size, self.n)
            )
            if found is not None:
                self.measured[i] = found[0]

    def __call__(self, rows: Ints, throughput: Floats) -> Floats:
        """For each of ``rows``, whose one-device throughput is given."""
        out = throughput * self.n
        if not self.modelled or len(rows) == 0:
            return out
        gradient, gb_s, batch = self.gradient[rows], self.gb_s[rows], self.batch[rows]
        known = ~np.isnan(gradient) & ~np.isnan(gb_s) & (throughput > 0)
        if known.any():
            out[known] = scaling.data_parallel_throughputs(
                batch[known] / throughput[known],
                batch[known],
                float(self.n),
                gradient[known],
                gb_s[known],
                self.params,
                self.factor[rows][known],
            )
        measured = self.measured[rows]
        lab = ~np.isnan(measured)
        out[lab] = throughput[lab] * self.n * measured[lab]
        return out

    def one(self, row: int, throughput: float) -> float:
        """For one row (a listed candidate or rejection, whose estimate may be capped)."""
        return float(self(np.array([row], dtype=np.int64), np.array([throughput]))[0])


def _gradient_bytes(spec: WorkloadSpec, precision: Precision) -> float:
    if spec.custom is not None:
        return scaling.gradient_bytes(custom.profile(spec.custom, precision, Task.train), precision)
    found = profile_of(spec.name, Task.train, precision)
    return np.nan if found is None else scaling.gradient_bytes(found, precision)
