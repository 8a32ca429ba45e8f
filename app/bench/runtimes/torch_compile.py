"""torch.compile (inductor). Opt-in: compiling takes minutes on a small CPU; its compile time is
reported apart from its speed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bench.needs import TORCH
from app.bench.runtimes.base import RuntimeInfo, runtimes
from app.bench.runtimes.torch_eager import TorchEager

if TYPE_CHECKING:
    import torch


@runtimes.register
class TorchCompile(TorchEager):
    info = RuntimeInfo(
        name="torch-compile",
        description="torch.compile (inductor) over the eager model; compile time reported apart",
        tasks=TorchEager.info.tasks,
        precisions=TorchEager.info.precisions,
        needs=(TORCH,),
    )

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        import torch

        compiled: torch.nn.Module = torch.compile(model)  # type: ignore[assignment]
        return compiled
