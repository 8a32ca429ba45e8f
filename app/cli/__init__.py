"""The `hwadvisor` command line: one module per command or command group, assembled here.

A top-level command is a function in its module, registered below in the order `--help` lists it;
a command group is a module's ``group`` (a Typer app). Modules import heavy parts (torch, uvicorn,
the database) inside their commands, so `hwadvisor --help` starts fast.
"""

from __future__ import annotations

import sys

import typer
from sqlalchemy.exc import OperationalError

from app import __version__
from app.cli import (
    agent,
    bench,
    catalog,
    clusters,
    db,
    imports,
    jobs,
    machines,
    plan,
    plugins,
    probe,
    recommend,
    server,
    serving,
    tokens,
    workloads,
)
from app.cli.common import database_url, shown_url
from app.errors import HwadvisorError

cli = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Hardware-selection advisor for deep learning.",
)


@cli.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


cli.command()(server.server)
cli.command()(server.up)
cli.command()(probe.probe)
cli.command()(bench.bench)
cli.command()(recommend.recommend)
cli.command()(plan.plan)
cli.command("plan-serving")(serving.plan_serving)
cli.command("import")(imports.import_public)
cli.command()(plugins.plugins)
cli.add_typer(db.group, name="db")
cli.add_typer(tokens.group, name="token")
cli.add_typer(machines.group, name="machines")
cli.add_typer(clusters.group, name="clusters")
cli.add_typer(jobs.group, name="jobs")
cli.add_typer(agent.group, name="agent")
cli.add_typer(catalog.group, name="catalog")
cli.add_typer(workloads.group, name="workloads")


def main() -> None:
    try:
        cli()
    except HwadvisorError as exc:
        typer.echo(f"hwadvisor: error: {exc}", err=True)
        sys.exit(1)
    except OperationalError as exc:
        typer.echo(
            f"hwadvisor: error: cannot use the database at {shown_url(database_url())}: {exc.orig}"
            " (check HWADVISOR_DATABASE_URL and that the server is running)",
            err=True,
        )
        sys.exit(1)
