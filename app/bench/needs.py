"""The packages the bench's plug-ins need, named once (what a missing one says and how to install it)."""

from __future__ import annotations

from app.registry import Need

TORCH = Need("torch", "torch", install="./scripts/setup (torch==2.13.0, the CPU wheel)")
