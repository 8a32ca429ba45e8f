"""`hwadvisor bench`: measure this machine on a suite, optionally uploading the run."""

from __future__ import annotations

from contextlib import ExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.errors import AuthError, ConfigError, ForbiddenError, HwadvisorError, NotFoundError

if TYPE_CHECKING:
    from app.agent.client import AgentClient

ONLY_EXAMPLES = ("resnet50", "gemm_1024")
"""What --help offers for --only: names the default suite (quick) runs on any machine."""


def bench(
    suite: Annotated[str, typer.Option(help="quick, standard, full, or the path of a suite TOML file.")] = "quick",
    only: Annotated[str | None, typer.Option(help=f"Run only this workload (e.g. {', '.join(ONLY_EXAMPLES)}).")] = None,
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

    from app.agent.client import AgentClient
    from app.bench.report import render_results
    from app.bench.runner import run_report, run_suite
    from app.bench.suites import load_suite
    from app.probes import probe_machine

    if upload and not token:
        raise HwadvisorError("--upload needs a machine token", hint="pass --token or set HWADVISOR_MACHINE_TOKEN")
    if only is not None:
        _check_known(only)
    chosen = load_suite(suite)
    with ExitStack() as stack:
        server = stack.enter_context(AgentClient(upload, token)) if upload else None
        if server is not None:
            _check_machine_token(server, chosen.name)
            stack.callback(_beat_idle, server)
        machine = probe_machine()
        if only is not None and not chosen.configs(machine, only=only):
            runs = ", ".join(sorted({config.workload for config in chosen.configs(machine)})) or "nothing here"
            raise ConfigError(
                f"suite {chosen.name} runs no {only} config on this machine; it runs {runs}",
                hint="choose a suite that has it with --suite: quick, standard, full or a TOML file",
            )
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
        if server is not None:
            stored, created = server.upload_run(report)
            typer.echo(f"uploaded run {stored.run_id} ({'new' if created else 'already stored'})", err=True)
    if run.interrupted:
        raise typer.Exit(130)


def _check_machine_token(server: AgentClient, suite: str) -> None:
    """Ask the server before measuring, with a heartbeat (the cheapest call a machine token may make, and a
    true one: the machine is about to be busy), so a refused token or a machine still pending approval
    fails now rather than after minutes of measuring."""
    from app.contracts import AgentState, Heartbeat, MachineStatus

    try:
        reply = server.heartbeat(Heartbeat(state=AgentState.running, note=f"hwadvisor bench --suite {suite}"))
    except AuthError as exc:  # 401 a wrong, revoked or expired token; 403 a token of another kind
        raise type(exc)(f"not measuring: {exc.message}", hint=exc.hint) from None
    if reply.status is MachineStatus.pending:
        raise ForbiddenError(
            f"not measuring: machine {reply.machine_id} is pending approval",
            hint=f"an admin approves it with `hwadvisor machines approve {reply.machine_id}`",
        )


def _beat_idle(server: AgentClient) -> None:
    """The machine is no longer busy; a failure here must not hide the run's own outcome."""
    from app.contracts import AgentState, Heartbeat

    with suppress(HwadvisorError):
        server.heartbeat(Heartbeat(state=AgentState.idle))


def _check_known(name: str) -> None:
    """A name no registry knows is a typo: say so before probing, instead of measuring nothing."""
    from app.bench.primitives import primitives
    from app.bench.workloads import workloads

    if name not in workloads and name not in primitives:
        known = ", ".join(sorted({*workloads.names(), *primitives.names()}))
        raise NotFoundError(f"unknown workload {name!r}; these exist: {known}")
