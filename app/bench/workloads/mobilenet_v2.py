"""MobileNetV2: depthwise-separable, memory-bound, the edge devices' CNN."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import ImageWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    from torch import nn


@workloads.register
class MobileNetV2Workload(ImageWorkload):
    info = WorkloadInfo(
        name="mobilenet_v2",
        description="MobileNetV2 (width 1.0), 224x224: depthwise-separable, memory-bound",
        parameters=3_504_872,
        flops_per_sample=601_548_544,
    )

    def build(self) -> nn.Module:
        from app.bench.models.cnn import MobileNetV2

        return MobileNetV2()
