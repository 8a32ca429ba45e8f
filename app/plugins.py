"""Every plug-in family by name: what ``GET /api/v1/registry``, the CLI's help and the dashboard read.

The families are named here once, by the module that holds each registry; their plug-ins are
found by the registry itself (one file each), and none of this imports torch.
"""

from __future__ import annotations

import importlib
from typing import Any

from app.errors import NotFoundError
from app.registry import Registry, describe

__all__ = ["FAMILIES", "describe", "describe_all", "registry"]

FAMILIES: dict[str, str] = {
    "probe": "app.probes.base:probes",
    "workload": "app.bench.workloads.base:workloads",
    "runtime": "app.bench.runtimes.base:runtimes",
    "variant": "app.bench.variants.base:variants",
    "primitive": "app.bench.primitives.base:primitives",
    "energy_meter": "app.bench.energy:meters",
    "estimator": "app.recommender.estimators:estimators",
    "objective": "app.recommender.objectives:objectives",
}


def registry(family: str) -> Registry[Any]:
    """The registry of a family, its plug-ins loaded."""
    try:
        module, attribute = FAMILIES[family].split(":")
    except KeyError:
        raise NotFoundError(f"unknown plug-in family {family!r}", hint=f"available: {', '.join(FAMILIES)}") from None
    found: Registry[Any] = getattr(importlib.import_module(module), attribute)
    return found.load()


def describe_all() -> dict[str, list[dict[str, Any]]]:
    """Every family's plug-ins as plain rows (name, description, tasks, precisions, needs, available...)."""
    return {family: describe(registry(family)) for family in FAMILIES}
