"""FCN-S from the DLBench study (Shi et al., 2016): GEMM-bound, large transposed GEMMs in training."""

from __future__ import annotations

from app.bench.workloads.base import MlpWorkload, WorkloadInfo, workloads


@workloads.register
class FcnS(MlpWorkload):
    """26752-2048x4-26752 with sigmoid.

    DESIGN quotes ~55M parameters for DLBench's FCN-S; this shape has 122,194,048 (two 26752x2048
    matrices alone are 109.6M). The shape is what the study describes, so the shape is kept."""

    info = WorkloadInfo(
        name="fcn_s",
        description="FCN-S MLP 26752-2048x4-26752, sigmoid",
        parameters=122_194_048,
        flops_per_sample=244_318_208,
    )
    widths = (26752, 2048, 2048, 2048, 2048, 26752)
