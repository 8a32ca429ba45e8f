"""Fully connected networks from the DLBench study (Shi et al., 2016)."""

from __future__ import annotations

import itertools

from torch import nn


def mlp(widths: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(widths)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(widths) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)
