"""`hwadvisor probe`: describe this machine, or one captured in a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def probe(
    as_json: Annotated[bool, typer.Option("--json", help="Print the MachineSpec as JSON.")] = False,
    replay: Annotated[
        Path | None, typer.Option(help="Describe a machine captured in this folder instead of this one.")
    ] = None,
) -> None:
    """Describe this machine: CPUs, GPUs, memory, software stack, power sensors."""
    from app.probes import probe_machine
    from app.probes.report import render_spec
    from app.probes.sources import FixtureSources

    spec = probe_machine(FixtureSources(replay) if replay else None)
    typer.echo(spec.model_dump_json(indent=2) if as_json else render_spec(spec))
