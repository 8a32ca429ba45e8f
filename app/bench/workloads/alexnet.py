"""AlexNet: the classic CNN."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import ImageWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    from torch import nn


@workloads.register
class AlexNetWorkload(ImageWorkload):
    info = WorkloadInfo(
        name="alexnet",
        description="AlexNet (one-tower variant), 224x224",
        parameters=61_100_840,
        flops_per_sample=1_428_376_960,
    )
    tiny_resolution = 224  # smaller inputs make the 6x6 adaptive pool upsample, which ONNX cannot export

    def build(self) -> nn.Module:
        from app.bench.models.cnn import AlexNet

        return AlexNet()
