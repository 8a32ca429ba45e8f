"""The workload plug-in shape: a model with random weights, its inputs, its training loss."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Literal

import torch
from torch import nn

from app.registry import Registry

Size = Literal["standard", "tiny"]
SEED = 20261122


class Workload(ABC):
    """One model. ``parameters`` is the published count a test checks the definition against;
    ``flops_per_sample`` (forward, standard size) is counted by torch's FLOP counter and pinned
    by a test, so the recommender can use it without building the model."""

    NAME: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[int]
    flops_per_sample: ClassVar[int]
    input_names: ClassVar[tuple[str, ...]] = ("input",)
    default_batch_sizes: ClassVar[tuple[int, ...]] = (1, 8, 32)

    @abstractmethod
    def build(self) -> nn.Module:
        """The model with random weights (seeded, so every machine measures the same numbers)."""

    @abstractmethod
    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        """One mini-batch of inputs on the CPU."""

    @abstractmethod
    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        """Training targets for one mini-batch."""

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(output, target)

    def make(self) -> nn.Module:
        torch.manual_seed(SEED)
        return self.build()

    def train_flops_per_sample(self) -> int:
        """Forward + backward: the backward pass costs about twice the forward (weights and inputs)."""
        return 3 * self.flops_per_sample


workloads: Registry[type[Workload]] = Registry("workload")


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
