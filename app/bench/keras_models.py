"""The zoo's architectures in Keras 3 (TensorFlow backend), random weights, channels-last images.

Each mirrors the torch definition in app/bench/models layer for layer, and a test holds the
trainable parameter counts to the torch ones (tests/bench/test_keras.py):

- ResNet-50 v1.5 is defined here: ``keras.applications.ResNet50`` is v1 (stride in the first 1x1
  convolution of a block, not the 3x3) with biases on every convolution (26,560 more parameters).
- MobileNetV2 is ``keras.applications.MobileNetV2(weights=None)``, which is the torch one.
- BERT is written from Keras layers (MultiHeadAttention, Dense, LayerNormalization, Embedding).
- The LSTM LM has 4 x hidden fewer parameters per layer: Keras keeps one bias per gate, torch two
  (b_ih + b_hh, cuDNN's convention, which always add up to one).

Keras' BatchNormalization keeps its moving mean and variance as (non-trainable) weights where torch
keeps buffers, so trainable weights are what compares with torch's parameters.

Import this module only after ``tensorflow_support.tensorflow(threads)`` has started TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import numpy as np

from app.bench.tensorflow_support import inputs, targets
from app.bench.workloads.base import SEED, ImageWorkload, Size, TokenWorkload, Workload

__all__ = ["KERAS_WORKLOADS", "build", "inputs", "loss", "targets", "trainable_parameters"]

KERAS_WORKLOADS = ("resnet50", "mobilenet_v2", "bert_base", "bert_base_squad", "bert_large_squad", "lstm")
"""The workloads with a Keras definition (app/bench/runtimes/keras_tf.py repeats the tuple so that
listing runtimes imports no TensorFlow; a test holds the two equal)."""

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


def _bottleneck(x: Any, planes: int, stride: int) -> Any:
    identity = x
    if stride != 1 or x.shape[-1] != planes * 4:
        identity = _conv_bn(x, planes * 4, 1, stride, relu=False)
    out = _conv_bn(x, planes, 1)
    out = _conv_bn(out, planes, 3, stride)  # v1.5: the stride is here
    out = _conv_bn(out, planes * 4, 1, relu=False)
    return keras.layers.ReLU()(keras.layers.Add()([out, identity]))


def resnet50(side: int, classes: int = 1000) -> keras.Model:
    inputs = keras.Input((side, side, 3), name="input")
    x = _conv_bn(inputs, 64, 7, 2)
    x = keras.layers.MaxPooling2D(3, strides=2)(keras.layers.ZeroPadding2D(1)(x))  # after a ReLU, 0 pads as -inf
    for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            x = _bottleneck(x, planes, stride if i == 0 else 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x), name="resnet50")


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
    """Post-norm: self-attention, add & norm, a 4x GELU feed-forward (exact erf GELU), add & norm."""

    def __init__(self, hidden: int, heads: int, intermediate: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.attention = keras.layers.MultiHeadAttention(heads, hidden // heads)
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

    def __init__(self, vocab: int, hidden: int, layers: int, heads: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.word_embeddings = keras.layers.Embedding(vocab, hidden)
        self.position_embeddings = keras.layers.Embedding(512, hidden)
        self.token_type_embeddings = keras.layers.Embedding(2, hidden)
        self.embedding_norm = keras.layers.LayerNormalization(epsilon=1e-12)
        self.encoder = [BertLayer(hidden, heads, 4 * hidden) for _ in range(layers)]
        self.pooler = keras.layers.Dense(hidden, activation="tanh")
        self.span = keras.layers.Dense(2)

    def call(self, input_ids: Any) -> Any:
        positions = keras.ops.arange(keras.ops.shape(input_ids)[1])
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)[None]
        x = self.embedding_norm(x + self.token_type_embeddings(keras.ops.zeros_like(input_ids)))
        for layer in self.encoder:
            x = layer(x)
        self.pooler(x[:, 0])
        return self.span(x)


def bert(vocab: int, hidden: int, layers: int, heads: int, sequence: int) -> keras.Model:
    """Wrapped in a functional model, so its input is typed (int32 ids) for XLA and the LiteRT converter."""
    input_ids = keras.Input((sequence,), dtype="int32", name="input_ids")
    return keras.Model(input_ids, Bert(vocab, hidden, layers, heads, name="bert")(input_ids), name="bert_squad")


# ----------------------------------------------------------------------------- LSTM LM


def lstm_lm(vocab: int, hidden: int, layers: int, sequence: int) -> keras.Model:
    tokens = keras.Input((sequence,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocab, hidden)(tokens)
    for _ in range(layers):
        x = keras.layers.LSTM(hidden, return_sequences=True)(x)
    return keras.Model(tokens, keras.layers.Dense(vocab)(x), name="lstm")


# ----------------------------------------------------------------------------- the zoo


def build(workload: Workload, size: Size = "standard") -> keras.Model:
    """The workload's model in Keras, seeded; at tiny size as shallow as the torch one (build_tiny)."""
    from app.bench.workloads import bert_base_squad, bert_large_squad, lstm

    name = workload.info.name
    if name not in KERAS_WORKLOADS:
        raise ValueError(f"no Keras definition of {name}; there are {', '.join(KERAS_WORKLOADS)}")
    keras.utils.set_random_seed(SEED)
    if isinstance(workload, ImageWorkload):
        side = workload.sample_shape(size)["image_side"]
        if name == "mobilenet_v2":
            return he_initialised(
                keras.applications.MobileNetV2(
                    input_shape=(side, side, 3), weights=None, classes=workload.classes, classifier_activation=None
                )
            )
        return resnet50(side, workload.classes)
    assert isinstance(workload, TokenWorkload)
    sequence = workload.sequence_length(size)
    if name == "lstm":
        return lstm_lm(workload.vocabulary, lstm.HIDDEN, lstm.LAYERS, sequence)
    hidden, layers, heads = 768, 12, 12
    if name == "bert_large_squad":
        hidden, layers, heads = bert_large_squad.HIDDEN, bert_large_squad.LAYERS, bert_large_squad.HEADS
    if size == "tiny" and name in ("bert_base_squad", "bert_large_squad"):
        layers = bert_base_squad.TINY_LAYERS if name == "bert_base_squad" else bert_large_squad.TINY_LAYERS
    return bert(workload.vocabulary, hidden, layers, heads, sequence)


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
