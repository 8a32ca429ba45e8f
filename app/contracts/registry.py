"""What ``GET /api/v1/registry`` answers: every plug-in family's plug-ins and the shared vocabulary."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.contracts.common import DeviceKind, Precision, Strict, Task


class PluginRow(Strict):
    """One plug-in: what it is, what it runs, what it needs, and whether it can run on the server's host."""

    name: str
    description: str
    tasks: list[str]
    precisions: list[str]
    needs: list[str] = Field(description="Python distributions it needs.")
    available: bool
    reason: str | None = Field(description="Why it cannot run here (a package missing, and how to install it).")
    details: dict[str, Any] = Field(description="Family-specific facts (a workload's parameter count, say).")


class Vocabulary(Strict):
    precisions: list[Precision]
    tasks: list[Task]
    device_kinds: list[DeviceKind] = Field(description="The kinds of device a recommendation or plan may keep.")
    suites: list[str] = Field(description="The built-in benchmark suites.")


class RegistryRead(Strict):
    families: dict[str, list[PluginRow]] = Field(
        description="Plug-ins by family: workload, runtime, variant, primitive, probe, energy_meter, estimator, "
        "objective, page."
    )
    vocabulary: Vocabulary
