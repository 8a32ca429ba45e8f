"""The `hwadvisor` command line."""

from __future__ import annotations

import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from app import __version__
from app.config import get_settings
from app.contracts import MachineStatus, Objective, Precision, Task, TokenKind
from app.errors import HwadvisorError

cli = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Hardware-selection advisor for deep learning.",
)
db_cli = typer.Typer(no_args_is_help=True, help="Database schema and data.")
token_cli = typer.Typer(no_args_is_help=True, help="Enrollment tokens, read-only API keys, the admin token.")
machines_cli = typer.Typer(no_args_is_help=True, help="Machines enrolled with this server.")
cli.add_typer(db_cli, name="db")
cli.add_typer(token_cli, name="token")
agent_cli = typer.Typer(no_args_is_help=True, help="The lab agent: enrol this machine, run jobs from the server.")
jobs_cli = typer.Typer(no_args_is_help=True, help="Benchmark jobs for the lab's agents.")
cli.add_typer(machines_cli, name="machines")
cli.add_typer(jobs_cli, name="jobs")
cli.add_typer(agent_cli, name="agent")


def _database_url() -> str:
    return get_settings().resolved_database_url


def _shown_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


@cli.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


@cli.command()
def server(
    host: Annotated[str | None, typer.Option(help="Address to bind (HWADVISOR_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (HWADVISOR_PORT).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes; use >1 only with PostgreSQL.")] = 1,
) -> None:
    """Apply migrations, then serve the API and dashboard until interrupted."""
    import uvicorn

    from app.db import migrate

    settings = get_settings()
    url = settings.resolved_database_url
    if settings.migrate_on_start:
        migrate.upgrade(url)
    typer.echo(f"hwadvisor {__version__}: database {_shown_url(url)}", err=True)
    if workers > 1:
        _share_metrics_between_workers(settings.data_dir)
    uvicorn.run(
        "app.server.app:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        workers=workers,
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


@cli.command()
def up(
    port: Annotated[int | None, typer.Option(help="Port (HWADVISOR_PORT, default 8321).")] = None,
    serve: Annotated[bool, typer.Option(help="Keep serving after the first look; --no-serve exits.")] = True,
) -> None:
    """Start everything on this machine (server on the embedded database, this machine enrolled) and serve."""
    from app.quickstart import up as run_up

    settings = get_settings()
    run_up(settings, host=settings.host, port=port or settings.port, echo=typer.echo, serve=serve)


@cli.command()
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


@cli.command()
def bench(
    suite: Annotated[str, typer.Option(help="quick, standard, full, or the path of a suite TOML file.")] = "quick",
    only: Annotated[str | None, typer.Option(help="Run only this workload (e.g. resnet50, gemm_2048).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the RunReport JSON here.")] = None,
    upload: Annotated[str | None, typer.Option(help="Upload the run to this server URL.")] = None,
    token: Annotated[
        str | None, typer.Option(envvar="HWADVISOR_MACHINE_TOKEN", help="Machine token for --upload.")
    ] = None,
    iterations: Annotated[
        int | None, typer.Option(min=1, help="Exactly this many timed iterations per config.")
    ] = None,
) -> None:
    """Measure this machine on a suite: progress, a results table, a RunReport."""
    from datetime import UTC, datetime

    from app.bench.report import render_results
    from app.bench.runner import run_report, run_suite
    from app.bench.suites import load_suite
    from app.probes import probe_machine

    if upload and not token:
        raise HwadvisorError("--upload needs a machine token", hint="pass --token or set HWADVISOR_MACHINE_TOKEN")
    chosen = load_suite(suite)
    machine = probe_machine()
    started = datetime.now(UTC)

    def progress(index: int, total: int, config: object, eta: float | None) -> None:
        left = f"~{eta:.0f} s left" if eta is not None else "estimating"
        typer.echo(f"[{index}/{total}] {left}  {config.label()}", err=True)  # type: ignore[attr-defined]

    run = run_suite(chosen, machine, only=only, fixed_iterations=iterations, progress=progress)
    report = run_report(chosen, machine, run, started_at=started)
    typer.echo(render_results(report.results))
    if run.interrupted:
        typer.echo(f"interrupted: kept the {len(report.results)} configs that finished", err=True)
    if out:
        out.write_text(report.model_dump_json(indent=1))
        typer.echo(f"wrote {out}", err=True)
    if upload:
        from app.agent.client import AgentClient

        with AgentClient(upload, token) as client:
            stored, created = client.upload_run(report)
        typer.echo(f"uploaded run {stored.run_id} ({'new' if created else 'already stored'})", err=True)
    if run.interrupted:
        raise typer.Exit(130)


@db_cli.command("upgrade")
def db_upgrade(revision: str = "head") -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    from app.db import migrate

    migrate.upgrade(_database_url(), revision)
    typer.echo(f"database {_shown_url(_database_url())} at {migrate.current_revision(_database_url())}")


@db_cli.command("downgrade")
def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision; 'base' empties it.")]) -> None:
    """Revert migrations down to REVISION."""
    from app.db import migrate

    migrate.downgrade(_database_url(), revision)
    typer.echo(f"database {_shown_url(_database_url())} at {migrate.current_revision(_database_url())}")


@db_cli.command("export")
def db_export(path: Annotated[Path, typer.Argument(help="JSON Lines file to write.")]) -> None:
    """Write every row of the database to a JSON Lines file."""
    from app.db.dump import export_file
    from app.db.engine import Database

    counts = export_file(Database(_database_url()), path)
    typer.echo(f"exported {sum(counts.values())} rows from {_shown_url(_database_url())} to {path}")


@db_cli.command("import")
def db_import(path: Annotated[Path, typer.Argument(help="A file made by `hwadvisor db export`.")]) -> None:
    """Load an export into this (empty, migrated) database, e.g. to move from SQLite to PostgreSQL."""
    from app.db.dump import import_file
    from app.db.engine import Database

    counts = import_file(Database(_database_url()), path)
    typer.echo(f"imported {sum(counts.values())} rows into {_shown_url(_database_url())}")


@db_cli.command("current")
def db_current() -> None:
    """Print the database's migration revision and the newest one."""
    from app.db import migrate

    url = _database_url()
    typer.echo(f"{_shown_url(url)}: at {migrate.current_revision(url)}, head {migrate.head_revision(url)}")


@token_cli.command("create")
def token_create(
    kind: Annotated[str, typer.Argument(help="enrollment or readonly")],
    note: str = "",
    max_uses: Annotated[int | None, typer.Option(min=1, help="Enrollment tokens: uses allowed.")] = None,
    expires_in_hours: Annotated[float | None, typer.Option(min=0.01)] = None,
) -> None:
    """Issue a token and print its secret once."""
    from app.db import tokens
    from app.db.engine import Database

    if kind not in (TokenKind.enrollment.value, TokenKind.readonly.value):
        raise HwadvisorError(f"cannot create a {kind!r} token", hint="choose enrollment or readonly")
    db = Database(_database_url())
    with db.writing() as session:
        _row, secret = tokens.issue(
            session,
            kind=TokenKind(kind),
            note=note,
            max_uses=max_uses,
            expires_in=timedelta(hours=expires_in_hours) if expires_in_hours else None,
        )
    typer.echo(secret)


@token_cli.command("list")
def token_list() -> None:
    """List tokens (never their secrets)."""
    from app.db import tokens
    from app.db.engine import Database

    with Database(_database_url()).reading() as session:
        for row in tokens.list_tokens(session):
            state = "revoked" if row.revoked_at else "active"
            typer.echo(f"{row.id}  {row.kind:<10} {state:<8} uses={row.uses}  {row.note}")


@token_cli.command("revoke")
def token_revoke(token_id: str) -> None:
    """Revoke a token by its id."""
    from app.db import tokens
    from app.db.engine import Database

    with Database(_database_url()).writing() as session:
        tokens.revoke(session, token_id)
    typer.echo(f"revoked {token_id}")


@token_cli.command("rotate-admin")
def token_rotate_admin() -> None:
    """Revoke every stored admin token and print a new one."""
    from app.db import tokens
    from app.db.engine import Database

    with Database(_database_url()).writing() as session:
        for row in tokens.list_tokens(session, kind=TokenKind.admin):
            tokens.revoke(session, row.id)
        _row, secret = tokens.issue(session, kind=TokenKind.admin, note="rotated")
    typer.echo(secret)


@machines_cli.command("list")
def machines_list(status: MachineStatus | None = None) -> None:
    """List machines with their status."""
    from app.db import machines
    from app.db.engine import Database

    with Database(_database_url()).reading() as session:
        for m in machines.page(session, status=status, limit=10_000).items:
            seen = m.last_seen_at.isoformat(timespec="seconds") if m.last_seen_at else "never"
            typer.echo(f"{m.id}  {m.status.value:<8} {m.hostname:<24} last seen {seen}")


@machines_cli.command("approve")
def machines_approve(machine_id: uuid.UUID) -> None:
    """Approve a pending machine so it may upload runs and take jobs."""
    from app.db import machines
    from app.db.engine import Database

    with Database(_database_url()).writing() as session:
        machine = machines.approve(session, machine_id)
        typer.echo(f"{machine.id} is {machine.status}")


@jobs_cli.command("create")
def jobs_create(
    suite: Annotated[str, typer.Option(help="quick, standard, full, or the path of a suite TOML file.")] = "quick",
    machine: Annotated[uuid.UUID | None, typer.Option(help="Run on this machine.")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Run on a machine with this label, KEY=VALUE.")] = None,
    max_attempts: Annotated[int, typer.Option(min=1, max=20)] = 3,
) -> None:
    """Queue a suite for a machine, or for the first free machine whose labels match."""
    from app.contracts import JobCreate
    from app.db import jobs
    from app.db.engine import Database

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
    with Database(_database_url()).writing() as session:
        job = jobs.to_job(jobs.create(session, body))
    typer.echo(f"queued job {job.id} ({job.suite})")


@jobs_cli.command("list")
def jobs_list() -> None:
    """Jobs, newest first."""
    from app.db import jobs
    from app.db.engine import Database

    with Database(_database_url()).reading() as session:
        for job in jobs.page(session, status=None, limit=1000, offset=0).items:
            target = str(job.machine_id) if job.machine_id else ",".join(f"{k}={v}" for k, v in job.selector.items())
            progress = f"{job.configs_done}/{job.configs_total or '?'}"
            typer.echo(f"{job.id}  {job.status.value:<9} {job.suite:<10} {progress:<8} {target}  {job.message or ''}")


@jobs_cli.command("cancel")
def jobs_cancel(job_id: uuid.UUID) -> None:
    """Cancel a queued or running job."""
    from app.db import jobs
    from app.db.engine import Database

    with Database(_database_url()).writing() as session:
        typer.echo(f"{job_id} is {jobs.cancel(session, job_id).status}")


ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="Agent config file (default ~/.config/hwadvisor/agent.json).")
]


@agent_cli.command("enroll")
def agent_enroll(
    server: Annotated[str, typer.Option(help="The hwadvisor server, e.g. http://lab-server:8321")],
    token: Annotated[str, typer.Option(help="An enrollment token from the server's admin.")],
    config: ConfigOption = None,
    outbox: Annotated[Path | None, typer.Option(help="Where to keep results until uploaded.")] = None,
    quiet_check: Annotated[bool, typer.Option(help="Wait for other load to stop before measuring.")] = True,
) -> None:
    """Describe this machine to the server and keep the machine token it answers with."""
    from app.agent.client import AgentClient
    from app.agent.settings import AgentSettings, default_config_path
    from app.probes import probe_machine

    path = config or default_config_path()
    with AgentClient(server, token) as client:
        enrolled = client.enroll(probe_machine())
    settings = AgentSettings(
        server=server, machine_id=enrolled.machine_id, token=enrolled.machine_token, quiet_check=quiet_check
    )
    if outbox is not None:
        settings.outbox = outbox
    settings.save(path)
    typer.echo(f"enrolled as machine {enrolled.machine_id} ({enrolled.status.value}); config in {path}")
    if enrolled.status is MachineStatus.pending:
        typer.echo(f"an admin must approve it: hwadvisor machines approve {enrolled.machine_id}")


@agent_cli.command("run")
def agent_run(
    config: ConfigOption = None,
    once: Annotated[bool, typer.Option(help="Exit when no job is waiting instead of polling.")] = False,
    iterations: Annotated[
        int | None, typer.Option(min=1, help="Exactly this many timed iterations per config.")
    ] = None,
    quiet_check: Annotated[bool | None, typer.Option(help="Override the config's quiet check.")] = None,
) -> None:
    """The agent daemon: heartbeat, claim jobs, measure, upload; SIGTERM finishes the current config and exits."""
    import logging

    from app.agent.daemon import run_agent
    from app.agent.settings import AgentSettings, default_config_path

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    settings = AgentSettings.load(config or default_config_path())
    if quiet_check is not None:
        settings.quiet_check = quiet_check
    run_agent(settings, once=once, fixed_iterations=iterations)


catalog_cli = typer.Typer(no_args_is_help=True, help="The hardware catalog: specs, prices, the lab's overrides.")
cli.add_typer(catalog_cli, name="catalog")


@cli.command()
def recommend(
    workload: Annotated[str, typer.Argument(help="A zoo workload (resnet50, bert_base, ...) or a published one.")],
    task: Annotated[Task, typer.Option(help="infer or train.")] = Task.infer,
    objective: Annotated[Objective, typer.Option(help="What to rank by.")] = Objective.throughput,
    batch: Annotated[
        int | None, typer.Option(min=1, help="Fixed batch size; unset, every batch is a candidate.")
    ] = None,
    power_budget: Annotated[float | None, typer.Option(min=1, help="Watts per device.")] = None,
    system_budget: Annotated[float | None, typer.Option(min=1, help="Watts for all --devices together.")] = None,
    devices: Annotated[int, typer.Option(min=1, help="Devices in the system.")] = 1,
    slo_ms: Annotated[float | None, typer.Option(min=0.001, help="p99 latency SLO in ms.")] = None,
    min_throughput: Annotated[float | None, typer.Option(min=0.001, help="Samples/s the system must reach.")] = None,
    max_price: Annotated[float | None, typer.Option(min=1, help="USD for all devices.")] = None,
    precision: Annotated[list[Precision] | None, typer.Option(help="Allowed precision (repeat).")] = None,
    runtime: Annotated[list[str] | None, typer.Option(help="Allowed runtime (repeat).")] = None,
    catalog: Annotated[bool, typer.Option("--catalog", help="Also hardware nobody here owns yet.")] = False,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Recommendation as JSON.")] = False,
) -> None:
    """Rank hardware x runtime x precision x batch for a workload under a power budget."""
    from pydantic import ValidationError

    from app.contracts import WorkloadSpec
    from app.db.engine import Database
    from app.db.migrate import upgrade
    from app.recommender import recommend as ask
    from app.recommender.table import render

    try:
        spec = WorkloadSpec.model_validate(
            {
                "workload": workload,
                "task": task,
                "objective": objective,
                "batch_size": batch,
                "scope": "catalog" if catalog else "owned",
                "limit": limit,
                "constraints": {
                    "power_budget_w": power_budget,
                    "system_power_budget_w": system_budget,
                    "device_count": devices,
                    "latency_p99_slo_ms": slo_ms,
                    "min_throughput_samples_per_s": min_throughput,
                    "max_price_usd": max_price,
                    "precisions": precision or None,
                    "runtimes": runtime or None,
                },
            }
        )
    except ValidationError as exc:
        raise typer.BadParameter(str(exc.errors()[0]["msg"])) from exc
    url = _database_url()
    upgrade(url)
    with Database(url).reading() as session:
        answer = ask(session, spec)
    typer.echo(answer.model_dump_json(indent=1) if as_json else render(answer))


@cli.command("import")
def import_public(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CSV with PublicResult's columns.")],
    source: Annotated[str | None, typer.Option(help="public:<name>, for rows without a source column.")] = None,
) -> None:
    """Import published results (a CSV) as their own source, apart from the lab's measurements."""
    from app.catalog import public
    from app.db.engine import Database
    from app.db.migrate import upgrade

    rows = public.parse_csv(path.read_text(encoding="utf-8"), source=source)
    url = _database_url()
    upgrade(url)
    with Database(url).writing() as session:
        count = public.store(session, rows)
    typer.echo(f"imported {count} results from {path} ({', '.join(sorted({r.source for r in rows}))})")


@catalog_cli.command("list")
def catalog_list(kind: Annotated[str | None, typer.Option(help="gpu or cpu")] = None) -> None:
    """The catalog as the recommender sees it (the lab's overrides applied)."""
    from app.catalog import store
    from app.db.engine import Database

    with Database(_database_url()).reading() as session:
        for e in store.entries(session).values():
            if kind is None or e.kind == kind:
                price = f"${e.price_usd:,.0f}" if e.price_usd else "-"
                typer.echo(f"{e.id:<26} {e.name:<36} {e.tdp_w or '-':>6} W  {price}")


@catalog_cli.command("set")
def catalog_set(
    catalog_id: str,
    field: Annotated[list[str], typer.Argument(help="FIELD=VALUE, e.g. price_usd=28000")],
) -> None:
    """Override fields of an entry (your own price quote), or add an entry (kind=, vendor=, name= needed)."""
    from app.catalog import store
    from app.contracts import CatalogPatch
    from app.db.engine import Database

    values = dict(f.split("=", 1) for f in field if "=" in f)
    if len(values) != len(field):
        raise typer.BadParameter("give each field as FIELD=VALUE")
    patch = CatalogPatch.model_validate(values, strict=False)
    with Database(_database_url()).writing() as session:
        entry = store.apply(session, catalog_id, patch)
    typer.echo(entry.model_dump_json(indent=1))


def main() -> None:
    try:
        cli()
    except HwadvisorError as exc:
        typer.echo(f"hwadvisor: error: {exc}", err=True)
        sys.exit(1)
    except OperationalError as exc:
        typer.echo(
            f"hwadvisor: error: cannot use the database at {_shown_url(_database_url())}: {exc.orig}"
            " (check HWADVISOR_DATABASE_URL and that the server is running)",
            err=True,
        )
        sys.exit(1)
