"""`hwadvisor server` and `hwadvisor up`: serve the API and the dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app import __version__
from app.cli.common import shown_url
from app.config import get_settings


def server(
    host: Annotated[str | None, typer.Option(help="Address to bind (HWADVISOR_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (HWADVISOR_PORT).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes; use >1 only with PostgreSQL.")] = 1,
) -> None:
    """Apply migrations, then serve the API and dashboard until interrupted."""
    import uvicorn

    from app.db import migrate
    from app.server.connections import GuardedH11Protocol

    settings = get_settings()
    url = settings.resolved_database_url
    if settings.migrate_on_start:
        migrate.upgrade(url)
    typer.echo(f"hwadvisor {__version__}: database {shown_url(url)}", err=True)
    if workers > 1:
        _share_metrics_between_workers(settings.data_dir)
    uvicorn.run(
        "app.server.app:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        workers=workers,
        http=GuardedH11Protocol,
        proxy_headers=settings.proxy_headers,  # uvicorn's default is on: any local client could pick its address
        log_level="info",
        access_log=False,  # the server logs each request itself, with its request id
    )


def _share_metrics_between_workers(data_dir: Path) -> None:
    """Several worker processes: prometheus_client keeps each one's counters in files in one folder,
    and /metrics sums them (app/server/observability.py). Emptied at start: counters begin at zero."""
    import os
    import shutil

    from app.server.observability import MULTIPROC_ENV

    folder = Path(os.environ.get(MULTIPROC_ENV) or data_dir / "metrics")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    os.environ[MULTIPROC_ENV] = str(folder)


def up(
    port: Annotated[int | None, typer.Option(help="Port (HWADVISOR_PORT, default 8321).")] = None,
    serve: Annotated[
        bool,
        typer.Option(help="Keep serving, with this machine's agent running, after the first look; --no-serve exits."),
    ] = True,
    suite: Annotated[
        str, typer.Option(help="The first look's suite: quick, standard, full, or a TOML file.")
    ] = "quick",
    quiet_check: Annotated[
        bool, typer.Option(help="The local agent waits for other load to stop before running a job.")
    ] = True,
) -> None:
    """Start everything on this machine (server on the embedded database, this machine enrolled, its agent
    running) and serve until Ctrl-C or SIGTERM, which stop the server and the agent too."""
    from app.quickstart import up as run_up

    settings = get_settings()
    run_up(
        settings,
        host=settings.host,
        port=port or settings.port,
        echo=typer.echo,
        serve=serve,
        suite=suite,
        quiet_check=quiet_check,
    )
