"""The packages the bench's plug-ins need, named once (what a missing one says and how to install it)."""

from __future__ import annotations

from app.registry import Need

TORCH = Need("torch", "torch", install="./scripts/setup (torch==2.13.0, the CPU wheel)")

KERAS_INSTALL = "pip install 'tensorflow-cpu==2.21.*' 'keras==3.15.*', or ./scripts/setup on Linux x86-64"
TENSORFLOW = Need("tensorflow", "tensorflow-cpu", install=KERAS_INSTALL, alternatives=("tensorflow",))
KERAS = Need("keras", "keras", install=KERAS_INSTALL)
LITERT_INSTALL = "pip install 'ai-edge-litert==2.3.*', or ./scripts/setup on Linux x86-64"
LITERT = Need("ai_edge_litert", "ai-edge-litert", install=LITERT_INSTALL)
