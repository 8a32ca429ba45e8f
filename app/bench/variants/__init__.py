"""Model variants: optimised forms of a workload (static int8, pruned, low-rank), one module each."""

from __future__ import annotations

from app.bench.variants.base import CAVEAT, Variant, VariantInfo, VariantKind, variants, workload_for

__all__ = ["CAVEAT", "Variant", "VariantInfo", "VariantKind", "variants", "workload_for"]
