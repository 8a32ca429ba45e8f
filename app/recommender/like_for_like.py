"""Whether an answer's candidates compare like with like: a note where they do not, and cannot yet.

A lab that owns no GPU gets every GPU figure of an inference ask as eager PyTorch (the runtime the
profiles were recorded from, app/recommender/space.py), while its CPUs may be listed with OpenVINO or
ONNX Runtime, which run the whole graph fused. Nothing measured a graph runtime on a GPU, and the model's
figure for one is a floor (``GRAPH_GPU_GAP``), so the GPU rows are what PyTorch does op by op, not what
the GPU can do for a deployed model. The answer says so instead of leaving the comparison to look fair.
"""

from __future__ import annotations

import numpy as np

from app.contracts import DeviceKind, Task, WorkloadSpec
from app.perfmodel.model import dispatch_of
from app.recommender.columns import Columns, Ints
from app.recommender.estimators.modelled import GRAPH_GPU_GAP


def eager_gpus(spec: WorkloadSpec, table: Columns, feasible: Ints) -> list[str]:
    """A note where every feasible GPU row of a zoo inference ask is eager PyTorch, listed or not (none
    where the ask chose its runtimes: it asked for what it got)."""
    if spec.task is not Task.infer or spec.custom is not None or spec.constraints.runtimes:
        return []
    on_gpu = np.array([h.ref.kind is DeviceKind.cuda for h in table.hardware], dtype=np.bool_)
    graph = np.array([dispatch_of(r) == "graph" for r in table.runtimes], dtype=np.bool_)
    gpu_rows = on_gpu[table.hardware_index[feasible]]
    graph_rows = graph[table.runtime_index[feasible]]
    if not gpu_rows.any() or (gpu_rows & graph_rows).any():
        return []
    used = np.unique(table.runtime_index[feasible[~gpu_rows & graph_rows]])
    graph_cpus = sorted(table.runtimes[i] for i in used.tolist())
    cpus = f" (the CPU rows of {', '.join(graph_cpus)} are a graph runtime's already)" if graph_cpus else ""
    low, high = GRAPH_GPU_GAP
    return [
        "every GPU figure here is eager PyTorch: nothing here measured a graph runtime on a GPU, and the model's "
        f"figure for one is a floor (MLPerf's TensorRT int8 runs were {low}-{high}x it). A graph runtime "
        "(TensorRT, ONNX Runtime's CUDA provider, torch.compile) runs the same model faster on the same GPU: "
        f"measure one on a GPU to compare like with like{cpus}"
    ]
