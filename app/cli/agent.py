"""`hwadvisor agent ...`: the lab agent on this machine (docs/AGENT.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.contracts import MachineStatus

group = typer.Typer(no_args_is_help=True, help="The lab agent: enrol this machine, run jobs from the server.")

ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="Agent config file (default ~/.config/hwadvisor/agent.json).")
]


def _current_token(path: Path, server: str) -> str | None:
    """The machine token of an existing config for the same server: re-enrolling proves with it that
    this is the machine's own agent (without it, the server holds the new token for an admin)."""
    from app.agent.settings import AgentSettings
    from app.errors import HwadvisorError

    if not path.is_file():
        return None
    try:
        current = AgentSettings.load(path)
    except (OSError, HwadvisorError):
        return None
    return current.token if current.server.rstrip("/") == server.rstrip("/") else None


@group.command("enroll")
def enroll(
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
    current = _current_token(path, server)
    with AgentClient(server, token) as client:
        enrolled = client.enroll(probe_machine(), machine_token=current)
    settings = AgentSettings(
        server=server, machine_id=enrolled.machine_id, token=enrolled.machine_token, quiet_check=quiet_check
    )
    if outbox is not None:
        settings.outbox = outbox
    settings.save(path)
    typer.echo(f"enrolled as machine {enrolled.machine_id} ({enrolled.status.value}); config in {path}")
    if enrolled.status is MachineStatus.pending:
        typer.echo(f"an admin must approve it: hwadvisor machines approve {enrolled.machine_id}")


@group.command("run")
def run(
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
    from app.agent.settings import AgentSettings, default_config_path, exposure_warning

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    path = config or default_config_path()
    settings = AgentSettings.load(path)
    warning = exposure_warning(path)
    if warning:
        logging.getLogger("hwadvisor.agent").warning(warning)
    if quiet_check is not None:
        settings.quiet_check = quiet_check
    run_agent(settings, once=once, fixed_iterations=iterations)


@group.command("outbox")
def outbox(
    config: ConfigOption = None,
    retry: Annotated[
        str | None, typer.Option(help="Offer a quarantined run (its id, or 'all') for upload again.")
    ] = None,
) -> None:
    """What the agent has not delivered: runs waiting to upload, and runs the server refused (quarantined)."""
    import uuid

    from app.agent.outbox import Outbox
    from app.agent.settings import AgentSettings, default_config_path
    from app.errors import ConfigError

    settings = AgentSettings.load(config or default_config_path())
    box = Outbox(settings.outbox)
    try:
        if retry is not None:
            try:
                run_id = None if retry == "all" else uuid.UUID(retry)
            except ValueError:
                raise ConfigError(f"--retry takes a run id or 'all', not {retry!r}") from None
            released = box.release(run_id)
            typer.echo(f"{released} run(s) will be uploaded again at the agent's next turn")
        typer.echo(f"outbox {settings.outbox}: {box.pending()} run(s) waiting to upload")
        held = box.quarantined()
        if held:
            typer.echo(f"{len(held)} run(s) quarantined (the server refused them; kept here):")
        for item in held:
            typer.echo(
                f"  {item.run_id}  job {item.job_id or '-'}  {item.suite}  {item.results} results"
                f"  {item.quarantined_at:%Y-%m-%d %H:%M}Z  {item.reason}"
            )
    finally:
        box.close()
