"""ResNet-50 v1.5: the reference CNN everyone publishes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import ImageWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    from torch import nn


@workloads.register
class ResNet50Workload(ImageWorkload):
    info = WorkloadInfo(
        name="resnet50",
        description="ResNet-50 v1.5, 224x224, 1000 classes",
        parameters=25_557_032,
        flops_per_sample=8_178_368_512,
        default_batch_sizes=(1, 8, 32, 128),
    )

    def build(self) -> nn.Module:
        from app.bench.models.cnn import ResNet50

        return ResNet50()
