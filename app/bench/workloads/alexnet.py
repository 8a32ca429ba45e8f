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

    def build_tiny(self) -> nn.Module:
        """A quarter of every width: the tests exercise the layers, not their width, and PyTorch's fp16
        convolution backward on a CPU is a slow fallback (a training step at batch 2 took 5.8 s at full
        width on this project's two-core VM, 96% of it there)."""
        from app.bench.models.cnn import AlexNet

        return AlexNet(narrow=4)
