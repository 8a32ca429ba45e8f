"""Low-rank factorisation: each linear layer and each full (not depthwise) convolution becomes two
thinner layers through a rank-r bottleneck, from the truncated SVD of its weight.

A weight W (out x in, a convolution's as out x (in x k x k)) is replaced by its best rank-r
approximation (Eckart-Young) as a product of two layers: a linear ``in -> r`` (a k x k convolution
``in -> r`` with the original stride and padding) then a linear ``r -> out`` (a 1 x 1 convolution) that
keeps the bias. r is ``share`` of the layer's full rank, min(out, in x k x k); a layer is factorised
only where that has fewer parameters, r x (in x k x k + out) < out x in x k x k (a square layer at
half its rank would not shrink and is kept whole).

The top-r singular subspace is found by the randomised range finder of Halko, Martinsson and Tropp
(2011) with one power iteration, W ~ Q (Q^T W): a full SVD (or eigendecomposition) of AlexNet's
4096 x 9216 layer took over a minute on two cores, this a few seconds. The weights are random, so
how close the approximation is changes no timing; the shapes are what is measured.

Embeddings, normalisations, depthwise convolutions and the LSTM's fused gate matrices are kept.
"""

from __future__ import annotations

import torch
from torch import nn

from app.bench.models.pruning import geometry


def rank_of(rows: int, columns: int, share: float) -> int | None:
    """The rank a rows x columns weight is factorised at, or None where that would not shrink it."""
    rank = max(1, round(min(rows, columns) * share))
    return rank if rank * (rows + columns) < rows * columns else None


SEED = 20261122


def factors(weight: torch.Tensor, rank: int, power: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """(first, second) with second @ first a rank-``rank`` approximation of ``weight`` (rows x columns)
    in its top singular subspace: first is rank x columns, second rows x rank (orthonormal columns)."""
    w = weight.detach().float()
    probe = torch.randn(w.shape[1], rank, generator=torch.Generator().manual_seed(SEED))
    q, _r = torch.linalg.qr(w @ probe)
    for _ in range(power):  # re-orthonormalised each way, or the small singular values drown
        z, _r = torch.linalg.qr(w.T @ q)
        q, _r = torch.linalg.qr(w @ z)
    return q.T @ w, q


def _linear(layer: nn.Linear, share: float) -> nn.Module:
    rank = rank_of(layer.out_features, layer.in_features, share)
    if rank is None:
        return layer
    first, second = factors(layer.weight, rank)
    down = nn.Linear(layer.in_features, rank, bias=False)
    up = nn.Linear(rank, layer.out_features, bias=layer.bias is not None)
    down.weight = nn.Parameter(first)
    up.weight = nn.Parameter(second)
    if layer.bias is not None:
        up.bias = nn.Parameter(layer.bias.detach().clone())
    return nn.Sequential(down, up)


def _conv(layer: nn.Conv2d, share: float) -> nn.Module:
    if layer.groups != 1:
        return layer
    out, into = layer.out_channels, layer.weight[0].numel()
    rank = rank_of(out, into, share)
    if rank is None:
        return layer
    first, second = factors(layer.weight.reshape(out, into), rank)
    spatial = nn.Conv2d(layer.in_channels, rank, bias=False, **geometry(layer))
    mix = nn.Conv2d(rank, out, 1, bias=layer.bias is not None)
    spatial.weight = nn.Parameter(first.reshape(rank, *layer.weight.shape[1:]))
    mix.weight = nn.Parameter(second.reshape(out, rank, 1, 1))
    if layer.bias is not None:
        mix.bias = nn.Parameter(layer.bias.detach().clone())
    return nn.Sequential(spatial, mix)


def factorise(model: nn.Module, share: float) -> nn.Module:
    """The model with every linear and full convolution factorised at ``share`` of its rank where that
    shrinks it (in place; returned for chaining)."""
    if not 0 < share < 1:
        raise ValueError(f"a rank share is between 0 and 1, not {share}")
    with torch.no_grad():
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if isinstance(child, nn.Linear):
                    setattr(parent, name, _linear(child, share))
                elif isinstance(child, nn.Conv2d):
                    setattr(parent, name, _conv(child, share))
    return model
