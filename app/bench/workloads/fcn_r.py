"""FCN-R from the DLBench study (Shi et al., 2016): a small MLP of the MNIST shape."""

from __future__ import annotations

from app.bench.workloads.base import MlpWorkload, WorkloadInfo, workloads


@workloads.register
class FcnR(MlpWorkload):
    info = WorkloadInfo(
        name="fcn_r",
        description="FCN-R MLP 784-2048-4096-1024-10 (MNIST shape), sigmoid",
        parameters=14_205_962,
        flops_per_sample=28_397_568,
        default_batch_sizes=(1, 64, 1024),
    )
    widths = (784, 2048, 4096, 1024, 10)
