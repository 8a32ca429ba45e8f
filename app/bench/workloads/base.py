"""The workload plug-in shape: a model with random weights, its inputs, its training loss.

A workload is one file in this package: a class with a ``WorkloadInfo`` registered with
``@workloads.register``. The module imports no torch at the top (the architectures live in
app/bench/models and are imported inside ``build``), so the zoo's metadata is readable by the
server, the CLI and the dashboard without torch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from app.contracts import MATH_PRECISIONS, Task
from app.registry import PluginInfo, Registry

if TYPE_CHECKING:
    import torch
    from torch import nn

    from app.bench.variants.base import Variant

Size = Literal["standard", "tiny"]
SEED = 20261122
ALL_TASKS = (Task.infer.value, Task.train.value)
ALL_PRECISIONS = tuple(p.value for p in MATH_PRECISIONS)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadInfo(PluginInfo):
    """``parameters`` is the published count a test checks the definition against;
    ``flops_per_sample`` (forward, standard size) is counted by torch's FLOP counter and pinned by a
    test, so the recommender can use it without building the model."""

    tasks: tuple[str, ...] = ALL_TASKS
    precisions: tuple[str, ...] = ALL_PRECISIONS
    parameters: int
    flops_per_sample: int
    default_batch_sizes: tuple[int, ...] = (1, 8, 32)
    input_names: tuple[str, ...] = ("input",)
    recurrent: bool = False
    """Built of LSTM layers (one fused aten call per layer: cuDNN's or oneDNN's RNN primitive)."""
    student_of: str | None = None
    """The workload this one is the usual distillation student of (resnet18 of resnet50): a smaller
    architecture people train to imitate the larger one. Its own workload, not a variant."""

    def details(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "parameters": self.parameters,
            "flops_per_sample": self.flops_per_sample,
            "default_batch_sizes": list(self.default_batch_sizes),
        }
        if self.student_of:
            found["student_of"] = self.student_of
        return found


class Workload(ABC):
    info: ClassVar[WorkloadInfo]

    def __init__(self, variant: Variant | None = None) -> None:
        self.variant = variant
        """The model variant ``make`` builds (app/bench/variants); None: the original model."""

    @property
    def cache_name(self) -> str:
        """What files made of this model are cached under: the workload's name, and the variant's
        where it changes the model (a quantisation variant is made from the original's files)."""
        if self.variant is not None and self.variant.changes_model:
            return f"{self.info.name}-{self.variant.info.name}"
        return self.info.name

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
        from torch import nn

        return nn.functional.cross_entropy(output, target)

    def make(self, size: Size = "standard") -> nn.Module:
        """The model, seeded; at tiny size (the tests') the one ``build_tiny`` makes; in the variant."""
        import torch

        torch.manual_seed(SEED)
        model = self.build_tiny() if size == "tiny" else self.build()
        return self.variant.transform(model) if self.variant is not None else model

    def build_tiny(self) -> nn.Module:
        """The model the tests run at tiny size: the standard one, unless that takes more than a few
        seconds to train and export, when a workload may make it shallower or narrower."""
        return self.build()

    def sample_shape(self, size: Size = "standard") -> dict[str, int]:
        """One sample's input shape, named (image side, sequence length): what a profile of the
        workload was made at. Empty where a workload does not say."""
        return {}

    def train_flops_per_sample(self) -> int:
        """Forward + backward: the backward pass costs about twice the forward (weights and inputs)."""
        return 3 * self.info.flops_per_sample


class ImageWorkload(Workload):
    """A classifier of square RGB images."""

    resolution: ClassVar[int] = 224
    tiny_resolution: ClassVar[int] = 64
    classes: ClassVar[int] = 1000

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        import torch

        side = self.sample_shape(size)["image_side"]
        return (torch.randn(batch, 3, side, side),)

    def sample_shape(self, size: Size = "standard") -> dict[str, int]:
        return {"image_side": self.tiny_resolution if size == "tiny" else self.resolution}

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        import torch

        return torch.randint(0, self.classes, (batch,))


class TokenWorkload(Workload):
    """A model over token ids of a fixed sequence length (``tiny_sequence`` in the tests)."""

    vocabulary: ClassVar[int]
    sequence: ClassVar[int]
    tiny_sequence: ClassVar[int]

    def sequence_length(self, size: Size) -> int:
        return self.tiny_sequence if size == "tiny" else self.sequence

    def sample_shape(self, size: Size = "standard") -> dict[str, int]:
        return {"sequence": self.sequence_length(size)}

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        import torch

        return (torch.randint(0, self.vocabulary, (batch, self.sequence_length(size))),)


class MlpWorkload(Workload):
    """A sigmoid MLP of the given widths."""

    widths: ClassVar[tuple[int, ...]]

    def build(self) -> nn.Module:
        from torch import nn

        from app.bench.models.mlp import mlp

        return mlp(list(self.widths), nn.Sigmoid)

    def inputs(self, batch: int, size: Size = "standard") -> tuple[torch.Tensor, ...]:
        import torch

        return (torch.randn(batch, self.widths[0]),)

    def sample_shape(self, size: Size = "standard") -> dict[str, int]:
        return {"features": self.widths[0]}

    def targets(self, batch: int, size: Size = "standard") -> torch.Tensor:
        import torch

        return torch.randint(0, self.widths[-1], (batch,))


workloads: Registry[type[Workload]] = Registry("workload", package="app.bench.workloads")


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def lstm_flops(inputs: int, hidden: int, steps: int) -> int:
    """FLOPs of one LSTM layer and direction over a sequence, per sample: the four gates' GEMMs,
    2 FLOP x 4 gates x (input + hidden) x hidden per step. torch's FLOP counter cannot see them (an
    LSTM runs as one fused kernel), so recurrent workloads add them to what it counts."""
    return 2 * 4 * (inputs + hidden) * hidden * steps
