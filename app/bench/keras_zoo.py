"""Which zoo workloads the project defines in Keras: read by the TensorFlow-based runtimes, which must
list what they run without importing TensorFlow, and by app/bench/keras_models.py, which builds them."""

from __future__ import annotations

KERAS_WORKLOADS = (
    "resnet50",
    "resnet18",
    "mobilenet_v2",
    "bert_base",
    "bert_base_squad",
    "bert_large_squad",
    "distilbert",
    "lstm",
)
"""The workloads with a Keras definition in app/bench/keras_models.py."""
KERAS_UNPRUNABLE = ("mobilenet_v2",)
"""Keras definitions that cannot be built pruned: MobileNetV2 is keras.applications', at fixed widths."""
