"""The zoo's architectures in Keras 3 (TensorFlow backend), random weights, channels-last images.

Each mirrors the torch definition in app/bench/models layer for layer, and a test holds the
trainable parameter counts to the torch ones (tests/bench/test_keras.py):

- ResNet-50 v1.5 is defined here: ``keras.applications.ResNet50`` is v1 (stride in the first 1x1
  convolution of a block, not the 3x3) with biases on every convolution (26,560 more parameters).
- MobileNetV2 is ``keras.applications.MobileNetV2(weights=None)``, which is the torch one.
- BERT is written from Keras layers (MultiHeadAttention, Dense, LayerNormalization, Embedding).
- The LSTM LM has 4 x hidden fewer parameters per layer: Keras keeps one bias per gate, torch two
  (b_ih + b_hh, cuDNN's convention, which always add up to one).
- The distillation students: ResNet-18 written out like ResNet-50 (basic blocks), DistilBERT as BERT
  without token-type embeddings and pooler.
- Pruned variants (app/bench/variants/pruned.py) are built at the widths the torch surgery leaves
  (``kept`` of every prunable width: ResNet blocks' inner widths, BERT's heads and feed-forward units,
  the LSTM's hidden units), so they are the same models; MobileNetV2 (keras.applications) is not.

Keras' BatchNormalization keeps its moving mean and variance as (non-trainable) weights where torch
keeps buffers, so trainable weights are what compares with torch's parameters.

Import this module only after ``tensorflow_support.tensorflow(threads)`` has started TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import numpy as np

from app.bench.keras_zoo import KERAS_UNPRUNABLE, KERAS_WORKLOADS
from app.bench.tensorflow_support import inputs, targets
from app.bench.variants.base import kept
from app.bench.workloads.base import SEED, ImageWorkload, Size, TokenWorkload, Workload

__all__ = ["KERAS_WORKLOADS", "build", "inputs", "loss", "targets", "trainable_parameters"]


BN = {"epsilon": 1e-5, "momentum": 0.9}
"""torch's BatchNorm2d defaults (Keras' are epsilon 1e-3, momentum 0.99)."""

Loss = Callable[[Any, Any], Any]


# ----------------------------------------------------------------------------- ResNet-50 v1.5


def _conv_bn(x: Any, filters: int, kernel: int, stride: int = 1, *, relu: bool = True) -> Any:
    if kernel > 1:
        x = keras.layers.ZeroPadding2D(kernel // 2)(x)  # torch's symmetric padding ("same" pads 0/1 at stride 2)
    x = keras.layers.Conv2D(filters, kernel, strides=stride, use_bias=False, kernel_initializer="he_normal")(x)
    x = keras.layers.BatchNormalization(**BN)(x)
    return keras.layers.ReLU()(x) if relu else x


def _bottleneck(x: Any, planes: int, stride: int, pruned: float | None) -> Any:
    identity = x
    if stride != 1 or x.shape[-1] != planes * 4:
        identity = _conv_bn(x, planes * 4, 1, stride, relu=False)
    width = kept(planes, pruned) if pruned else planes
    out = _conv_bn(x, width, 1)
    out = _conv_bn(out, width, 3, stride)  # v1.5: the stride is here
    out = _conv_bn(out, planes * 4, 1, relu=False)
    return keras.layers.ReLU()(keras.layers.Add()([out, identity]))


def _basic(x: Any, planes: int, stride: int, pruned: float | None) -> Any:
    identity = x
    if stride != 1 or x.shape[-1] != planes:
        identity = _conv_bn(x, planes, 1, stride, relu=False)
    out = _conv_bn(x, kept(planes, pruned) if pruned else planes, 3, stride)
    out = _conv_bn(out, planes, 3, relu=False)
    return keras.layers.ReLU()(keras.layers.Add()([out, identity]))


RESNET_STAGES = {
    "resnet50": (_bottleneck, ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))),
    "resnet18": (_basic, ((64, 2, 1), (128, 2, 2), (256, 2, 2), (512, 2, 2))),
}


def resnet(name: str, side: int, classes: int = 1000, pruned: float | None = None) -> keras.Model:
    """ResNet-50 v1.5 or ResNet-18; ``pruned``: the share of each block's inner width removed."""
    block, stages = RESNET_STAGES[name]
    inputs = keras.Input((side, side, 3), name="input")
    x = _conv_bn(inputs, 64, 7, 2)
    x = keras.layers.MaxPooling2D(3, strides=2)(keras.layers.ZeroPadding2D(1)(x))  # after a ReLU, 0 pads as -inf
    for planes, blocks, stride in stages:
        for i in range(blocks):
            x = block(x, planes, stride if i == 0 else 1, pruned)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x), name=name)


def he_initialised(model: keras.Model) -> keras.Model:
    """Convolution kernels drawn with He's variance (2 / fan-in; a depthwise kernel's fan-in is its
    window). Keras' default (Glorot) shrinks MobileNetV2's signal to ~1e-12 by the logits, which
    leaves nothing for int8 calibration to measure (the LiteRT int8 model would output zeros)."""
    rng = np.random.default_rng(SEED)
    for layer in model.layers:
        if isinstance(layer, keras.layers.DepthwiseConv2D | keras.layers.Conv2D):
            shape = tuple(layer.kernel.shape)
            fan_in = int(np.prod(shape[:2])) * (1 if isinstance(layer, keras.layers.DepthwiseConv2D) else shape[2])
            layer.kernel.assign(rng.normal(0.0, np.sqrt(2.0 / fan_in), shape).astype(np.float32))
    return model


# ----------------------------------------------------------------------------- BERT


class BertLayer(keras.layers.Layer):  # type: ignore[misc]  # keras is untyped
    """Post-norm: self-attention, add & norm, a 4x GELU feed-forward (exact erf GELU), add & norm.
    Pruned, it keeps fewer heads (each as wide as before) and feed-forward units."""

    def __init__(self, hidden: int, heads: int, intermediate: int, head_size: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.attention = keras.layers.MultiHeadAttention(heads, head_size)
        self.attention_norm = keras.layers.LayerNormalization(epsilon=1e-12)
        self.intermediate = keras.layers.Dense(intermediate, activation="gelu")
        self.output_dense = keras.layers.Dense(hidden)
        self.output_norm = keras.layers.LayerNormalization(epsilon=1e-12)

    def call(self, x: Any) -> Any:
        x = self.attention_norm(x + self.attention(x, x))
        return self.output_norm(x + self.output_dense(self.intermediate(x)))


class Bert(keras.Model):  # type: ignore[misc]
    """BERT with a SQuAD span head. Subclassed, so the pooler (which the span head does not read,
    as in torch) is part of the model and its parameters count; in a graph (XLA, LiteRT) it is pruned."""

    def __init__(
        self,
        vocab: int,
        hidden: int,
        layers: int,
        heads: int,
        *,
        distilled: bool = False,
        pruned: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.word_embeddings = keras.layers.Embedding(vocab, hidden)
        self.position_embeddings = keras.layers.Embedding(512, hidden)
        self.token_type_embeddings = None if distilled else keras.layers.Embedding(2, hidden)
        self.embedding_norm = keras.layers.LayerNormalization(epsilon=1e-12)
        kept_heads = kept(heads, pruned) if pruned else heads
        units = kept(4 * hidden, pruned) if pruned else 4 * hidden
        self.encoder = [BertLayer(hidden, kept_heads, units, hidden // heads) for _ in range(layers)]
        self.pooler = None if distilled else keras.layers.Dense(hidden, activation="tanh")
        self.span = keras.layers.Dense(2)

    def call(self, input_ids: Any) -> Any:
        positions = keras.ops.arange(keras.ops.shape(input_ids)[1])
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)[None]
        if self.token_type_embeddings is not None:
            x = x + self.token_type_embeddings(keras.ops.zeros_like(input_ids))
        x = self.embedding_norm(x)
        for layer in self.encoder:
            x = layer(x)
        if self.pooler is not None:
            self.pooler(x[:, 0])
        return self.span(x)


def bert(
    vocab: int,
    hidden: int,
    layers: int,
    heads: int,
    sequence: int,
    *,
    distilled: bool = False,
    pruned: float | None = None,
) -> keras.Model:
    """Wrapped in a functional model, so its input is typed (int32 ids) for XLA and the LiteRT converter."""
    input_ids = keras.Input((sequence,), dtype="int32", name="input_ids")
    encoder = Bert(vocab, hidden, layers, heads, distilled=distilled, pruned=pruned, name="bert")
    return keras.Model(input_ids, encoder(input_ids), name="bert_squad")


# ----------------------------------------------------------------------------- LSTM LM


def lstm_lm(vocab: int, hidden: int, layers: int, sequence: int, pruned: float | None = None) -> keras.Model:
    tokens = keras.Input((sequence,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocab, hidden)(tokens)
    for _ in range(layers):
        x = keras.layers.LSTM(kept(hidden, pruned) if pruned else hidden, return_sequences=True)(x)
    return keras.Model(tokens, keras.layers.Dense(vocab)(x), name="lstm")


# ----------------------------------------------------------------------------- the zoo


def unbuildable(workload: Workload) -> str | None:
    """Why the workload (in its variant) has no Keras definition here, or None."""
    name = workload.info.name
    if name not in KERAS_WORKLOADS:
        return f"no Keras definition of {name}; there are {', '.join(KERAS_WORKLOADS)}"
    variant = workload.variant
    if variant is not None and variant.changes_model:
        if variant.keras_pruning() is None:
            return f"the Keras definitions are not built in variant {variant.info.name}"
        if name in KERAS_UNPRUNABLE:
            return f"{name}'s Keras definition is keras.applications', which cannot be built pruned"
    return None


def build(workload: Workload, size: Size = "standard") -> keras.Model:
    """The workload's model in Keras (in its variant, where ``unbuildable`` says it can be), seeded;
    at tiny size as shallow as the torch one (build_tiny)."""
    from app.bench.workloads import bert_base, bert_large_squad, distilbert, lstm

    reason = unbuildable(workload)
    if reason:
        raise ValueError(reason)
    name = workload.info.name
    variant = workload.variant
    pruned = variant.keras_pruning() if variant is not None else None
    keras.utils.set_random_seed(SEED)
    if isinstance(workload, ImageWorkload):
        side = workload.sample_shape(size)["image_side"]
        if name == "mobilenet_v2":
            return he_initialised(
                keras.applications.MobileNetV2(
                    input_shape=(side, side, 3), weights=None, classes=workload.classes, classifier_activation=None
                )
            )
        return resnet(name, side, workload.classes, pruned)
    assert isinstance(workload, TokenWorkload)
    sequence = workload.sequence_length(size)
    if name == "lstm":
        return lstm_lm(workload.vocabulary, lstm.HIDDEN, lstm.LAYERS, sequence, pruned)
    hidden, layers, heads = 768, 12, 12
    if name == "bert_large_squad":
        hidden, layers, heads = bert_large_squad.HIDDEN, bert_large_squad.LAYERS, bert_large_squad.HEADS
    if name == "distilbert":
        layers = distilbert.TINY_LAYERS if size == "tiny" else distilbert.LAYERS
    if size == "tiny" and name in ("bert_base", "bert_base_squad", "bert_large_squad"):
        layers = bert_large_squad.TINY_LAYERS if name == "bert_large_squad" else bert_base.TINY_LAYERS
    return bert(workload.vocabulary, hidden, layers, heads, sequence, distilled=name == "distilbert", pruned=pruned)


def loss(workload: Workload) -> Loss:
    """The workload's training loss in Keras (cross-entropy on logits, as the torch workloads')."""
    cross_entropy: Loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if workload.info.name.startswith("bert"):

        def span(target: Any, output: Any) -> Any:
            return (cross_entropy(target[:, 0], output[..., 0]) + cross_entropy(target[:, 1], output[..., 1])) / 2

        return span
    return cross_entropy


def trainable_parameters(model: keras.Model) -> int:
    return sum(int(np.prod(w.shape)) for w in model.trainable_weights)
