"""What the server can name: every plug-in family's plug-ins (workloads, runtimes, primitives, probes,
energy meters, estimators, objectives, the dashboard's pages) and the shared vocabulary (precisions,
tasks, built-in suites). The dashboard's forms and menu and the CLI's help read this, so no list of
names is written twice."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from app import plugins, web
from app.contracts import BUILT_IN_SUITES, Precision, Task
from app.server.deps import Reader

router = APIRouter(prefix="/registry", tags=["registry"])


class PluginRow(BaseModel):
    """One plug-in: what it is, what it runs, what it needs, and whether it can run on the server's host."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    tasks: list[str]
    precisions: list[str]
    needs: list[str] = Field(description="Python distributions it needs.")
    available: bool
    reason: str | None = Field(description="Why it cannot run here (a package missing, and how to install it).")
    details: dict[str, Any] = Field(description="Family-specific facts (a workload's parameter count, say).")


class Vocabulary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    precisions: list[Precision]
    tasks: list[Task]
    suites: list[str] = Field(description="The built-in benchmark suites.")


class RegistryRead(BaseModel):
    model_config = ConfigDict(extra="forbid")

    families: dict[str, list[PluginRow]] = Field(
        description="Plug-ins by family: workload, runtime, primitive, probe, energy_meter, estimator, objective, page."
    )
    vocabulary: Vocabulary


@router.get("")
def read_registry(_reader: Reader) -> RegistryRead:
    """Every plug-in family with its plug-ins' metadata (read without importing torch), and the vocabulary."""
    families: dict[str, list[dict[str, Any]]] = {**plugins.describe_all(), "page": web.pages()}
    return RegistryRead.model_validate(
        {
            "families": families,
            "vocabulary": {"precisions": list(Precision), "tasks": list(Task), "suites": list(BUILT_IN_SUITES)},
        }
    )
