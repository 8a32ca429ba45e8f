"""hwadvisor: a hardware-selection advisor for deep learning."""

from __future__ import annotations

__version__ = "0.1.0"
