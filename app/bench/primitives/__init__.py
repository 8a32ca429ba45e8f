"""Hardware ceilings, one module per kind (see base.py)."""

from __future__ import annotations

from app.bench.primitives.base import PreparedPrimitive, Primitive, PrimitiveInfo, primitives

__all__ = ["PreparedPrimitive", "Primitive", "PrimitiveInfo", "primitives"]
