"""`hwadvisor bench`: measure this machine on a suite, optionally uploading the run."""

from __future__ import annotations

from contextlib import ExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.errors import AuthError, ConfigError, ForbiddenError, HwadvisorError, NotFoundError

if TYPE_CHECKING:
    from app.agent.client import AgentClient
    from app.bench.data_parallel import Rendezvous

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
    nodes: Annotated[
        int, typer.Option(min=1, max=1024, help="Machines measuring together: every config data-parallel over them.")
    ] = 1,
    node_rank: Annotated[int, typer.Option(min=0, help="This machine's place among --nodes (0 records the run).")] = 0,
    master: Annotated[
        str | None, typer.Option(help="HOST:PORT node 0 listens on (it uses PORT and the next, one per config).")
    ] = None,
    cluster: Annotated[
        str | None, typer.Option(help="The declared cluster the nodes form (hwadvisor clusters list).")
    ] = None,
) -> None:
    """Measure this machine on a suite: progress, a results table, a RunReport. With --nodes N, run
    the same command on each of N machines (--node-rank 0..N-1, the same --master and suite): every
    config trains data-parallel over all of them, and node 0 records the result."""
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
    rendezvous = _rendezvous(nodes, node_rank, master, cluster)
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

        run = run_suite(
            chosen, machine, only=only, fixed_iterations=iterations, progress=progress, rendezvous=rendezvous
        )
        if rendezvous is not None and rendezvous.node_rank != 0:
            typer.echo(f"node {rendezvous.node_rank} of {rendezvous.nodes}: done; node 0 records the run")
            return
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


def _rendezvous(nodes: int, node_rank: int, master: str | None, cluster: str | None) -> Rendezvous | None:
    """Where this machine meets the others of a run over several, or None for a run of its own."""
    from app.bench.data_parallel import Rendezvous

    if nodes == 1:
        if master is not None or node_rank or cluster is not None:
            raise ConfigError("--master, --node-rank and --cluster are for a run over several machines: add --nodes N")
        return None
    host, _, port = (master or "").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(
            f"--nodes {nodes} needs --master HOST:PORT, the address node 0 listens on",
            hint="the same on every node, e.g. --master 10.0.0.5:29500",
        )
    if node_rank >= nodes:
        raise ConfigError(f"--node-rank {node_rank} is not one of 0..{nodes - 1}")
    if cluster is not None:
        from pydantic import TypeAdapter, ValidationError

        from app.contracts import Name

        try:
            TypeAdapter(Name).validate_python(cluster)
        except ValidationError:
            raise ConfigError(
                f"--cluster {cluster!r} is not a cluster name", hint="hwadvisor clusters list shows the declared ones"
            ) from None
    return Rendezvous(host.strip("[]"), int(port), nodes, node_rank, cluster)


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
