"""`hwadvisor workloads profile-onnx FILE`: an ONNX file as a custom workload to ask about."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.contracts import Precision
from app.errors import InvalidInput

group = typer.Typer(no_args_is_help=True, help="Custom workloads: profile a model the zoo does not have.")


@group.command("profile-onnx")
def profile_onnx(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The .onnx file.")],
    precision: Annotated[Precision, typer.Option(help="Bytes per value to count the tensors at.")] = Precision.fp32,
    name: Annotated[str | None, typer.Option(help="The workload's name (default: the file's stem).")] = None,
    dim: Annotated[
        list[str] | None, typer.Option(help="NAME=SIZE for a symbolic dimension besides the batch (repeat).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the profile as JSON.")] = False,
) -> None:
    """Profile an ONNX file per operator class, as the zoo's models are, and print the ``custom``
    workload to put in a recommendation or prediction request."""
    from app.perfmodel import onnx_profile

    try:
        dims = onnx_profile.parse_dims(dim or [])
    except InvalidInput as exc:
        raise typer.BadParameter(str(exc), param_hint="--dim") from exc
    workload = name or _name(file)
    found = onnx_profile.profile(file.read_bytes(), precision, name=workload, dims=dims)
    read = found.read()
    if as_json:
        typer.echo(read.model_dump_json(indent=1))
        return
    p = found.profile
    typer.echo(f"{workload}: {found.nodes} nodes, weights stored as {found.exported_as}, counted at {precision.value}")
    typer.echo(f"{'class':<12} {'GFLOP/sample':>13} {'MB/sample':>10} {'MB/step':>9} {'kernels':>8}")
    for b in p.buckets:
        typer.echo(
            f"{b.op_class.value:<12} {b.flops.per_sample / 1e9:>13.4f} {b.bytes.per_sample / 1e6:>10.3f}"
            f" {b.bytes.per_step / 1e6:>9.3f} {b.kernels:>8.0f}"
        )
    typer.echo(f"parameters {found.parameters:,}; weights {p.memory.weights / 1e6:.1f} MB")
    for op, count in found.unknown.items():
        typer.echo(f"not understood: {op} x{count} (counted as data movement, bytes only)")
    typer.echo(f"fusion assumed: {p.fusion}")
    typer.echo('custom workload (for "custom" in POST /api/v1/recommendations or /predictions):')
    typer.echo(read.custom.model_dump_json())


def _name(file: Path) -> str:
    """A valid workload name from the file's stem ('My-Model.v2' -> 'my-model.v2')."""
    cleaned = "".join(c if c.isalnum() or c in "_.-" else "_" for c in file.stem.lower()).lstrip("_.-")[:64]
    if not cleaned:
        raise InvalidInput(f"cannot make a workload name from {file.name!r}", hint="give --name")
    return cleaned
