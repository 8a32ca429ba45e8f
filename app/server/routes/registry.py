"""What the server can name: every plug-in family's plug-ins (workloads, runtimes, primitives, probes,
energy meters, estimators, objectives, the dashboard's pages) and the shared vocabulary (precisions,
tasks, device kinds, built-in suites). The dashboard's forms and menu and the CLI's help read this, so no list of
names is written twice."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app import plugins, web
from app.contracts import BUILT_IN_SUITES, DeviceKind, Precision, RegistryRead, Task
from app.server.deps import Reader

router = APIRouter(prefix="/registry", tags=["registry"])


@router.get("")
def read_registry(_reader: Reader) -> RegistryRead:
    """Every plug-in family with its plug-ins' metadata (read without importing torch), and the vocabulary."""
    families: dict[str, list[dict[str, Any]]] = {**plugins.describe_all(), "page": web.pages()}
    return RegistryRead.model_validate(
        {
            "families": families,
            "vocabulary": {
                "precisions": list(Precision),
                "tasks": list(Task),
                "device_kinds": list(DeviceKind),
                "suites": list(BUILT_IN_SUITES),
            },
        }
    )
