"""ResNet-18: the usual distillation student of ResNet-50 (a workload of its own, not a variant)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import ImageWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    from torch import nn


@workloads.register
class ResNet18Workload(ImageWorkload):
    info = WorkloadInfo(
        name="resnet18",
        description="ResNet-18, 224x224, 1000 classes: the distillation student of ResNet-50",
        parameters=11_689_512,
        flops_per_sample=3_628_146_688,
        default_batch_sizes=(1, 8, 32, 128),
        student_of="resnet50",
    )

    def build(self) -> nn.Module:
        from app.bench.models.cnn import ResNet18

        return ResNet18()
