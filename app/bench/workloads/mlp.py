"""Fully connected networks from the DLBench study (Shi et al., 2016)."""

from __future__ import annotations

import itertools

import torch
from torch import nn

from app.bench.workloads.base import Size, Workload, workloads


def mlp(widths: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(widths)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(widths) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


class MlpWorkload(Workload):
    WIDTHS: list[int]

    def build(self) -> nn.Module:
        return mlp(self.WIDTHS, nn.Sigmoid)

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        return (torch.randn(batch, self.WIDTHS[0]),)

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        return torch.randint(0, self.WIDTHS[-1], (batch,))


@workloads.register("fcn_s")
class FcnS(MlpWorkload):
    """26752-2048x4-26752 with sigmoid: GEMM-bound, large transposed GEMMs in training.

    DESIGN quotes ~55M parameters for DLBench's FCN-S; this shape has 122,194,048 (two 26752x2048
    matrices alone are 109.6M). The shape is what the study describes, so the shape is kept."""

    NAME = "fcn_s"
    description = "FCN-S MLP 26752-2048x4-26752, sigmoid"
    parameters = 122_194_048
    flops_per_sample = 244_318_208
    WIDTHS = [26752, 2048, 2048, 2048, 2048, 26752]


@workloads.register("fcn_r")
class FcnR(MlpWorkload):
    NAME = "fcn_r"
    description = "FCN-R MLP 784-2048-4096-1024-10 (MNIST shape), sigmoid"
    parameters = 14_205_962
    flops_per_sample = 28_397_568
    WIDTHS = [784, 2048, 4096, 1024, 10]
    default_batch_sizes = (1, 64, 1024)
