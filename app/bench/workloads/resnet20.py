"""ResNet-20 for CIFAR-10: the usual distillation student of ResNet-56 (He et al. 2016; the
resnet56 -> resnet20 pair of the knowledge-distillation benchmarks). Same blocks, 3 per stage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import ImageWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    from torch import nn


@workloads.register
class ResNet20Workload(ImageWorkload):
    info = WorkloadInfo(
        name="resnet20",
        description="ResNet-20 for CIFAR-10, 32x32: the distillation student of ResNet-56",
        parameters=269_722,
        flops_per_sample=81_102_080,
        default_batch_sizes=(1, 64, 256),
    )
    resolution = 32
    tiny_resolution = 32
    classes = 10

    def build(self) -> nn.Module:
        from app.bench.models.cnn import ResNetCifar

        return ResNetCifar(20, self.classes)
