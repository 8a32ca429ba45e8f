"""The variant plug-in shape: an optimised form of a workload, measured for speed beside the original.

A variant is one file in this package: a class with a ``VariantInfo`` registered with
``@variants.register``. Its ``kind`` says where it acts:

- ``pruning`` and ``lowrank`` change the torch model itself (``transform``), before anything else
  sees it, so every runtime that starts from the torch model or its ONNX export measures the same
  smaller model; the Keras runtimes build it at the same widths where the variant says how
  (``keras_widths``);
- ``quantisation`` leaves the float model alone: the runtime quantises it (ONNX Runtime's QDQ,
  OpenVINO's NNCF, LiteRT's converter), and a runtime says which quantisation kinds it takes.

The weights are random, so a variant's accuracy is not measured: every variant carries ``CAVEAT``.
Modules import torch inside methods only, so the list of variants is readable anywhere.
"""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from app.bench.workloads.base import Workload, workloads
from app.contracts import Precision, Task
from app.registry import PluginInfo, Registry

if TYPE_CHECKING:
    from torch import nn

    from app.bench.config import BenchConfig

CAVEAT = "speed only; check accuracy on your data"
"""What every variant's figures carry: the weights are random, so the accuracy a variant gives up
(or keeps, after fine-tuning) was not measured, and it is never the original model's equal."""


def kept(width: int, amount: float) -> int:
    """How many of ``width`` channels (units, heads) survive pruning ``amount`` (0.3: 30%) of them:
    at least one. The torch surgery and the Keras definitions both size a pruned layer with it."""
    return max(1, round(width * (1 - amount)))


class VariantKind(StrEnum):
    quantisation = "quantisation"
    pruning = "pruning"
    lowrank = "lowrank"


MODEL_KINDS = (VariantKind.pruning, VariantKind.lowrank)
"""The kinds that change the torch model (and so its ONNX export and the cache files made of it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantInfo(PluginInfo):
    kind: VariantKind
    workloads: tuple[str, ...] = ()
    """The workloads it applies to; empty: every one."""
    caveat: str = CAVEAT

    def details(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": self.kind.value, "caveat": self.caveat}
        if self.workloads:
            found["workloads"] = list(self.workloads)
        return found


class Variant(ABC):
    info: ClassVar[VariantInfo]

    @property
    def changes_model(self) -> bool:
        return self.info.kind in MODEL_KINDS

    def unsupported(self, config: BenchConfig) -> str | None:
        """Why the variant does not apply to this config (whatever the runtime), or None."""
        if self.info.workloads and config.workload not in self.info.workloads:
            return (
                f"variant {self.info.name} is defined for {', '.join(self.info.workloads)}; "
                f"{config.workload} has no {self.info.kind.value} plan"
            )
        return None

    def transform(self, model: nn.Module) -> nn.Module:
        """The model in this variant (the same object may come back changed): the float model itself
        for a quantisation variant, which the runtime quantises."""
        return model

    def keras_pruning(self) -> float | None:
        """For the Keras definitions: the share of every prunable width removed (``kept`` sizes each),
        or None where the Keras models are not built in this variant."""
        return None


class QuantisationVariant(Variant):
    """A quantisation method: the float model, quantised by the runtime, for inference in int8."""

    def unsupported(self, config: BenchConfig) -> str | None:
        if config.task is not Task.infer:
            return f"variant {self.info.name} is post-training quantisation, for inference: use task infer"
        if config.precision is not Precision.int8:
            return f"variant {self.info.name} is an int8 model: ask precision int8 (not {config.precision.value})"
        return super().unsupported(config)


variants: Registry[type[Variant]] = Registry("variant", package="app.bench.variants")


def workload_for(name: str, variant: str | None) -> Workload:
    """The named workload, in the named variant (None: the original model)."""
    return workloads.get(name)(variants.get(variant)() if variant is not None else None)
