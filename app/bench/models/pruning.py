"""Structured pruning of the zoo's architectures: whole channels, units and heads are cut out, so the
model really shrinks (fewer parameters, smaller tensors, less arithmetic), not masked to zero.

Which channels: the ones with the smallest L1 norm of their weights (the magnitude criterion of Li et
al. 2017), per layer; with random weights this only picks *which* channels go, and the speed depends on
how many. How many: ``kept(width, amount)`` of every prunable width, the same share everywhere, so a
Keras definition built at the same widths (app/bench/keras_models.py) is the same model.

What is prunable (widths that nothing outside the block depends on, so no residual sum changes shape):
- ResNet bottlenecks (ResNet-50): the two inner widths; basic blocks (ResNet-18/20/56): the inner one;
- MobileNetV2: the expanded width of each inverted residual that expands;
- AlexNet and the MLPs: every hidden width (AlexNet's last convolution feeds the classifier 36 columns
  per channel, cut with it);
- the LSTM: each layer's hidden units (four gates each), the next layer and the decoder cut with them;
- BERT: each layer's attention heads (query/key/value rows and the output's columns of a head) and
  feed-forward units.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from app.bench.models.bert import BertForQuestionAnswering, BertLayer
from app.bench.models.cnn import (
    AlexNet,
    BasicBlock,
    BasicBlockV1,
    Bottleneck,
    InvertedResidual,
    MobileNetV2,
    ResNet18,
    ResNet50,
    ResNetCifar,
)
from app.bench.models.rnn import LstmLm
from app.bench.variants.base import kept

Index = torch.Tensor


def strongest(weight: torch.Tensor, keep: int, groups: int = 1) -> Index:
    """The ``keep`` strongest rows of ``weight`` (dim 0, in groups of ``groups`` rows that go together,
    a head's or an LSTM unit's), by L1 norm, in their original order."""
    norms = weight.detach().reshape(weight.shape[0] // groups, -1).abs().sum(dim=1)
    return torch.sort(torch.topk(norms, keep).indices).values


def _cut(tensor: torch.Tensor, index: Index | None, dim: int) -> torch.Tensor:
    return tensor if index is None else tensor.index_select(dim, index)


def geometry(layer: nn.Conv2d) -> dict[str, Any]:
    """A convolution's window: what a convolution made to replace it keeps."""
    return {
        "kernel_size": layer.kernel_size,
        "stride": layer.stride,
        "padding": layer.padding,
        "dilation": layer.dilation,
    }


def conv(layer: nn.Conv2d, out: Index | None = None, into: Index | None = None) -> nn.Conv2d:
    """The convolution with only the ``out`` output and ``into`` input channels (depthwise: both are
    the same channels, given as ``out``)."""
    depthwise = layer.groups > 1 and layer.groups == layer.in_channels
    weight = _cut(layer.weight, out, 0)
    if not depthwise:
        weight = _cut(weight, into, 1)
    outs, ins = weight.shape[0], (weight.shape[0] if depthwise else weight.shape[1])
    made = nn.Conv2d(ins, outs, groups=outs if depthwise else 1, bias=layer.bias is not None, **geometry(layer))
    made.weight = nn.Parameter(weight.detach().clone())
    if layer.bias is not None:
        made.bias = nn.Parameter(_cut(layer.bias, out, 0).detach().clone())
    return made


def batch_norm(layer: nn.BatchNorm2d, index: Index) -> nn.BatchNorm2d:
    made = nn.BatchNorm2d(len(index), eps=layer.eps, momentum=layer.momentum)
    made.weight = nn.Parameter(layer.weight.detach()[index].clone())
    made.bias = nn.Parameter(layer.bias.detach()[index].clone())
    assert layer.running_mean is not None and layer.running_var is not None
    made.running_mean = layer.running_mean[index].clone()
    made.running_var = layer.running_var[index].clone()
    return made


def linear(layer: nn.Linear, out: Index | None = None, into: Index | None = None) -> nn.Linear:
    weight = _cut(_cut(layer.weight, out, 0), into, 1)
    made = nn.Linear(weight.shape[1], weight.shape[0], bias=layer.bias is not None)
    made.weight = nn.Parameter(weight.detach().clone())
    if layer.bias is not None:
        made.bias = nn.Parameter(_cut(layer.bias, out, 0).detach().clone())
    return made


# ----------------------------------------------------------------------------- per architecture


def _bottleneck(block: Bottleneck, amount: float) -> None:
    first = strongest(block.conv1.weight, kept(block.conv1.out_channels, amount))
    block.conv1, block.bn1 = conv(block.conv1, out=first), batch_norm(block.bn1, first)
    second = strongest(block.conv2.weight, kept(block.conv2.out_channels, amount))
    block.conv2, block.bn2 = conv(block.conv2, out=second, into=first), batch_norm(block.bn2, second)
    block.conv3 = conv(block.conv3, into=second)


def _basic(block: BasicBlock | BasicBlockV1, amount: float) -> None:
    inner = strongest(block.conv1.weight, kept(block.conv1.out_channels, amount))
    block.conv1, block.bn1 = conv(block.conv1, out=inner), batch_norm(block.bn1, inner)
    block.conv2 = conv(block.conv2, into=inner)


def _inverted_residual(block: InvertedResidual, amount: float) -> None:
    layers = list(block.block)
    if len(layers) != 8:  # expand ratio 1: the depthwise width is the block's input, not its own
        return
    expand, bn1, act1, depthwise, bn2, act2, project, bn3 = layers
    assert isinstance(expand, nn.Conv2d) and isinstance(depthwise, nn.Conv2d) and isinstance(project, nn.Conv2d)
    assert isinstance(bn1, nn.BatchNorm2d) and isinstance(bn2, nn.BatchNorm2d)
    hidden = strongest(expand.weight, kept(expand.out_channels, amount))
    block.block = nn.Sequential(
        conv(expand, out=hidden),
        batch_norm(bn1, hidden),
        act1,
        conv(depthwise, out=hidden),
        batch_norm(bn2, hidden),
        act2,
        conv(project, into=hidden),
        bn3,
    )


def _chain(layers: list[nn.Module], amount: float) -> list[nn.Module]:
    """Consecutive convolutions or linears (activations and pools between them): every width but the
    last output is pruned, each layer's input cut as its predecessor's output was. A linear after a
    convolution reads ``columns`` inputs per channel (AlexNet: 6 x 6)."""
    weighted = [i for i, layer in enumerate(layers) if isinstance(layer, nn.Conv2d | nn.Linear)]
    out = list(layers)
    previous: Index | None = None
    for position, i in enumerate(weighted):
        layer = layers[i]
        last = position == len(weighted) - 1
        if isinstance(layer, nn.Conv2d):
            keep = None if last else strongest(layer.weight, kept(layer.out_channels, amount))
            out[i] = conv(layer, out=keep, into=previous)
        else:
            assert isinstance(layer, nn.Linear)
            into = previous
            if previous is not None and isinstance(layers[weighted[position - 1]], nn.Conv2d):
                source = layers[weighted[position - 1]]
                assert isinstance(source, nn.Conv2d)
                columns = layer.in_features // source.out_channels
                into = (previous[:, None] * columns + torch.arange(columns)).reshape(-1)
            keep = None if last else strongest(layer.weight, kept(layer.out_features, amount))
            out[i] = linear(layer, out=keep, into=into)
        previous = keep
    return out


def _alexnet(model: AlexNet, amount: float) -> None:
    features, classifier = list(model.features), list(model.classifier)
    pruned = _chain(features + classifier, amount)
    model.features = nn.Sequential(*pruned[: len(features)])
    model.classifier = nn.Sequential(*pruned[len(features) :])


def _lstm(model: LstmLm, amount: float) -> None:
    lstm = model.lstm
    hidden, layers = lstm.hidden_size, lstm.num_layers
    keep = kept(hidden, amount)
    made = nn.LSTM(lstm.input_size, keep, num_layers=layers, batch_first=lstm.batch_first)
    into: Index | None = None
    for layer in range(layers):
        w_ih, w_hh = getattr(lstm, f"weight_ih_l{layer}"), getattr(lstm, f"weight_hh_l{layer}")
        # a unit is its four gates' rows (i, f, g, o, each ``hidden`` rows apart): score them together
        by_unit = torch.cat([w_ih, w_hh], dim=1).reshape(4, hidden, -1).transpose(0, 1).reshape(hidden, -1)
        units = strongest(by_unit, keep)
        rows = torch.cat([units + gate * hidden for gate in range(4)])
        with torch.no_grad():
            getattr(made, f"weight_ih_l{layer}").copy_(_cut(w_ih[rows], into, 1))
            getattr(made, f"weight_hh_l{layer}").copy_(w_hh[rows][:, units])
            getattr(made, f"bias_ih_l{layer}").copy_(getattr(lstm, f"bias_ih_l{layer}")[rows])
            getattr(made, f"bias_hh_l{layer}").copy_(getattr(lstm, f"bias_hh_l{layer}")[rows])
        into = units
    model.lstm = made
    model.decoder = linear(model.decoder, into=into)


def _bert_layer(layer: BertLayer, amount: float) -> None:
    size = layer.head_size
    qkv = torch.cat([layer.query.weight, layer.key.weight, layer.value.weight], dim=1)
    heads = strongest(qkv, kept(layer.heads, amount), groups=size)
    rows = (heads[:, None] * size + torch.arange(size)).reshape(-1)
    layer.query, layer.key, layer.value = (linear(lin, out=rows) for lin in (layer.query, layer.key, layer.value))
    layer.attention_out = linear(layer.attention_out, into=rows)
    layer.heads = len(heads)
    units = strongest(layer.intermediate.weight, kept(layer.intermediate.out_features, amount))
    layer.intermediate = linear(layer.intermediate, out=units)
    layer.output = linear(layer.output, into=units)


def prune(model: nn.Module, amount: float) -> nn.Module:
    """The model with ``amount`` of every prunable width removed (in place; returned for chaining).
    ValueError for an architecture with no pruning plan here."""
    if not 0 < amount < 1:
        raise ValueError(f"a pruning amount is a share between 0 and 1, not {amount}")
    with torch.no_grad():
        if isinstance(model, ResNet50 | ResNet18 | ResNetCifar):
            for block in model.modules():
                if isinstance(block, Bottleneck):
                    _bottleneck(block, amount)
                elif isinstance(block, BasicBlock | BasicBlockV1):
                    _basic(block, amount)
        elif isinstance(model, MobileNetV2):
            for block in model.modules():
                if isinstance(block, InvertedResidual):
                    _inverted_residual(block, amount)
        elif isinstance(model, AlexNet):
            _alexnet(model, amount)
        elif isinstance(model, nn.Sequential) and all(isinstance(m, nn.Linear | nn.Sigmoid) for m in model):
            return nn.Sequential(*_chain(list(model), amount))
        elif isinstance(model, LstmLm):
            _lstm(model, amount)
        elif isinstance(model, BertForQuestionAnswering):
            for layer in model.bert.layers:
                assert isinstance(layer, BertLayer)
                _bert_layer(layer, amount)
        else:
            raise ValueError(f"no structured-pruning plan for {type(model).__name__}")
    return model
