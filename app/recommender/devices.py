"""What ``device_count`` devices give together: N times one device for inference (independent
copies), and for training the data-parallel scaling model (app/perfmodel/scaling.py: one device's
step plus the gradient all-reduce it cannot hide, over the part's NVLink or PCIe inside one system;
docs/PLANNING.md). A row whose gradient size or link is unknown (no profile of the workload, a CPU)
keeps N times one device, and the answer's notes say so."""

from __future__ import annotations

import numpy as np

from app.contracts import Precision, Task, WorkloadSpec
from app.perfmodel import custom, scaling
from app.perfmodel.predict import profile_of
from app.recommender.columns import PRECISIONS, Columns, Floats, Ints


def together(spec: WorkloadSpec, table: Columns, rows: Ints, throughput: Floats) -> Floats:
    """Samples/s of ``device_count`` devices for each of ``rows``, whose one-device throughput is given."""
    n = spec.constraints.device_count
    if n == 1 or spec.task is not Task.train or len(rows) == 0:
        return throughput * n
    gradient = np.array([_gradient_bytes(spec, p) for p in PRECISIONS], dtype=np.float64)[table.precision_index[rows]]
    links = [scaling.ring_link(h.spec, n) for h in table.hardware]
    gb_s = np.array([np.nan if link is None else link.gb_s for link in links])[table.hardware_index[rows]]
    batch = np.array([table.options[i].config.batch_size for i in rows.tolist()], dtype=np.float64)
    modelled = ~np.isnan(gradient) & ~np.isnan(gb_s) & (throughput > 0)
    out = throughput * n
    if modelled.any():
        out[modelled] = scaling.data_parallel_throughputs(
            batch[modelled] / throughput[modelled],
            batch[modelled],
            float(n),
            gradient[modelled],
            gb_s[modelled],
            scaling.shipped().params,
        )
    return out


def modelled(spec: WorkloadSpec) -> bool:
    """Whether ``together`` models the devices (training on several) rather than multiplying."""
    return spec.constraints.device_count > 1 and spec.task is Task.train


def _gradient_bytes(spec: WorkloadSpec, precision: Precision) -> float:
    if spec.custom is not None:
        return scaling.gradient_bytes(custom.profile(spec.custom, precision, Task.train), precision)
    found = profile_of(spec.name, Task.train, precision)
    return np.nan if found is None else scaling.gradient_bytes(found, precision)
