"""lowrank-25, lowrank-50: every linear layer and full convolution factorised through a bottleneck of
25% or 50% of its rank (truncated SVD; app/bench/models/lowrank.py), where that has fewer parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.bench.variants.base import Variant, VariantInfo, VariantKind, variants

if TYPE_CHECKING:
    from torch import nn


class LowRank(Variant):
    share: ClassVar[float]

    def transform(self, model: nn.Module) -> nn.Module:
        from app.bench.models.lowrank import factorise

        return factorise(model, self.share)


def _info(percent: int) -> VariantInfo:
    return VariantInfo(
        name=f"lowrank-{percent}",
        description=(
            f"low-rank factorisation: each linear and full convolution as two layers through rank = {percent}% of "
            "its full rank (truncated SVD), where that shrinks it; embeddings, depthwise convolutions and LSTM "
            "gates kept"
        ),
        kind=VariantKind.lowrank,
    )


@variants.register
class LowRank25(LowRank):
    info = _info(25)
    share = 0.25


@variants.register
class LowRank50(LowRank):
    info = _info(50)
    share = 0.5
