"""`hwadvisor jobs ...`: benchmark jobs queued for the lab's agents."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Annotated

import typer

from app.cli.common import database
from app.errors import HwadvisorError

group = typer.Typer(no_args_is_help=True, help="Benchmark jobs for the lab's agents.")


@group.command("create")
def create(
    suite: Annotated[str, typer.Option(help="quick, standard, full, or the path of a suite TOML file.")] = "quick",
    machine: Annotated[uuid.UUID | None, typer.Option(help="Run on this machine.")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Run on a machine with this label, KEY=VALUE.")] = None,
    max_attempts: Annotated[int, typer.Option(min=1, max=20)] = 3,
) -> None:
    """Queue a suite for a machine, or for the first free machine whose labels match."""
    from app.bench.unrunnable import job_notes
    from app.contracts import JobCreate
    from app.db import jobs

    selector = dict(item.split("=", 1) for item in (select or []) if "=" in item)
    if select and len(selector) != len(select):
        raise HwadvisorError("--select takes KEY=VALUE", hint="e.g. --select gpu=h100-sxm5-80gb")
    path = Path(suite)
    body = JobCreate(
        suite=suite if not path.is_file() else path.stem.replace("-", "_").lower()[:64] or "custom",
        suite_toml=path.read_text() if path.is_file() else None,
        machine_id=machine,
        selector=selector,
        max_attempts=max_attempts,
    )
    with database().writing() as session:
        job = jobs.to_job(jobs.create(session, body))
    typer.echo(f"queued job {job.id} ({job.suite})")
    for note in job_notes(body.suite_toml):
        typer.echo(f"note: {note}", err=True)


@group.command("list")
def list_() -> None:
    """Jobs, newest first."""
    from app.db import jobs

    with database().reading() as session:
        for job in jobs.page(session, status=None, limit=1000, offset=0).items:
            target = str(job.machine_id) if job.machine_id else ",".join(f"{k}={v}" for k, v in job.selector.items())
            progress = f"{job.configs_done}/{job.configs_total or '?'}"
            typer.echo(f"{job.id}  {job.status.value:<9} {job.suite:<10} {progress:<8} {target}  {job.message or ''}")


@group.command("cancel")
def cancel(job_id: uuid.UUID) -> None:
    """Cancel a queued or running job."""
    from app.db import jobs

    with database().writing() as session:
        typer.echo(f"{job_id} is {jobs.cancel(session, job_id).status}")
