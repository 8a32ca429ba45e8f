"""ResNet-56 for CIFAR-10: the DLBench small CNN."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.workloads.base import ImageWorkload, WorkloadInfo, workloads

if TYPE_CHECKING:
    from torch import nn


@workloads.register
class ResNet56Workload(ImageWorkload):
    info = WorkloadInfo(
        name="resnet56",
        description="ResNet-56 for CIFAR-10, 32x32 (He et al. 2016, option A shortcuts)",
        parameters=853_018,
        flops_per_sample=250_971_392,
        default_batch_sizes=(1, 64, 256),
    )
    resolution = 32
    tiny_resolution = 32
    classes = 10

    def build(self) -> nn.Module:
        from app.bench.models.cnn import ResNetCifar

        return ResNetCifar(56, self.classes)
