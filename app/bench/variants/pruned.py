"""pruned-30, pruned-50: structured pruning that removes 30% or 50% of every prunable width (channels,
hidden units, attention heads), so the model really shrinks (app/bench/models/pruning.py says which
widths of each architecture). Not fine-tuned: the weights are random anyway."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.bench.variants.base import Variant, VariantInfo, VariantKind, variants

if TYPE_CHECKING:
    from torch import nn

PRUNABLE = (
    "resnet50",
    "resnet18",
    "resnet56",
    "resnet20",
    "mobilenet_v2",
    "alexnet",
    "fcn_s",
    "fcn_r",
    "lstm",
    "bert_base",
    "bert_base_squad",
    "bert_large_squad",
    "distilbert",
)
"""The workloads with a pruning plan (GNMT's attention and bidirectional encoder have none here)."""


class Pruned(Variant):
    amount: ClassVar[float]

    def transform(self, model: nn.Module) -> nn.Module:
        from app.bench.models.pruning import prune

        return prune(model, self.amount)

    def keras_pruning(self) -> float | None:
        return self.amount


def _info(percent: int) -> VariantInfo:
    return VariantInfo(
        name=f"pruned-{percent}",
        description=(
            f"structured pruning: {percent}% of every prunable width removed (the channels, units and heads with "
            "the smallest L1 norm), not fine-tuned"
        ),
        kind=VariantKind.pruning,
        workloads=PRUNABLE,
    )


@variants.register
class Pruned30(Pruned):
    info = _info(30)
    amount = 0.3


@variants.register
class Pruned50(Pruned):
    info = _info(50)
    amount = 0.5
