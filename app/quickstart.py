"""`hwadvisor up`: the whole product on one machine, on the embedded SQLite default.

Starts the server, enrols this machine through the agent path (probe -> enrollment token ->
machine token over HTTP), approves it as the local operator, measures the quick suite, uploads
the run with the machine token, prints what was measured, and keeps serving until Ctrl-C or
SIGTERM, with this machine's agent running beside the server (heartbeats, so the machine stays
online; claims the jobs queued for it). Stopping stops both children: the agent first (it
finishes its config and hands a job back), then the server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

from app.agent.client import AgentClient
from app.agent.settings import AgentSettings
from app.bench.config import BenchConfig
from app.bench.report import render_results
from app.bench.runner import run_report, run_suite
from app.bench.suites import load_suite
from app.config import Settings
from app.contracts import MachineSpec, MachineStatus, RunReport, Scope, TokenKind, WorkloadSpec
from app.db import machines, migrate, tokens
from app.db.engine import Database
from app.errors import ConfigError, HwadvisorError
from app.probes import probe_machine
from app.probes.report import render_spec
from app.recommender import recommend
from app.recommender.table import render

STARTUP_TIMEOUT_S = 60
AGENT_POLL_S = 10.0
"""The local agent's turn: a heartbeat and a look for jobs (a machine is offline after 60 s without one)."""
AGENT_STOP_S = 60
SERVER_STOP_S = 15


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def start_server(host: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HWADVISOR_MIGRATE_ON_START": "false"}
    return subprocess.Popen([sys.executable, "-m", "app", "server", "--host", host, "--port", str(port)], env=env)


def wait_until_healthy(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise HwadvisorError(f"the server exited with code {server.returncode} while starting; see its log above")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise HwadvisorError(f"the server did not answer on {base_url} within {STARTUP_TIMEOUT_S} s")


def start_agent(config: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "app", "agent", "run", "--config", str(config)])


def stop_child(child: subprocess.Popen[bytes] | None, sig: signal.Signals, timeout_s: float) -> None:
    """Ask a child to stop, and kill it if it has not within the timeout."""
    if child is None or child.poll() is not None:
        return
    child.send_signal(sig)
    try:
        child.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops `up` the way Ctrl-C does, so its children are stopped too (by default SIGTERM
    ends the process at once and leaves them running)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous: Any = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def measure_quick(spec: MachineSpec, echo: Callable[[str], None], suite_name: str = "quick") -> RunReport:
    """The quick suite (or another) on this machine, as the agent runs it."""
    suite = load_suite(suite_name)
    started = datetime.now(UTC)

    def progress(index: int, total: int, config: BenchConfig, eta: float | None) -> None:
        left = f"~{eta:.0f} s left" if eta is not None else "estimating"
        echo(f"[{index}/{total}] {left}  {config.label()}")

    return run_report(suite, spec, run_suite(suite, spec, progress=progress), started_at=started)


def first_recommendation(db: Database, workload: str = "resnet50") -> str:
    """What the recommender says now: this machine's configs ranked, then catalog hardware beside
    them (the answers of `hwadvisor recommend resnet50 --owned` and `hwadvisor recommend resnet50`)."""
    parts = []
    for scope, command in ((Scope.owned, " --owned"), (Scope.catalog, "")):
        spec = WorkloadSpec(workload=workload, scope=scope, limit=5)
        with db.reading() as session:
            answer = recommend(session, spec)
        parts.append(f"\nrecommended for {spec.label} (hwadvisor recommend {workload}{command}):")
        parts.append(render(answer, rejected=3))
    return "\n".join(parts) + "\nbudgets, SLOs, objectives: hwadvisor recommend --help"


def up(
    settings: Settings,
    *,
    host: str,
    port: int,
    echo: Callable[[str], None],
    serve: bool = True,
    suite: str = "quick",
    quiet_check: bool = True,
) -> None:
    if not _port_free(host, port):
        raise ConfigError(f"port {port} on {host} is in use", hint="choose another with --port")
    load_suite(suite)  # an unknown suite is an error before anything starts
    url = settings.resolved_database_url
    migrate.upgrade(url)
    db = Database(url)
    with db.writing() as session:
        _row, enrollment = tokens.issue(
            session, kind=TokenKind.enrollment, note="hwadvisor up", max_uses=1, expires_in=timedelta(hours=1)
        )
    base_url = f"http://{host}:{port}"
    server: subprocess.Popen[bytes] | None = None
    agent: subprocess.Popen[bytes] | None = None
    with sigterm_as_interrupt():
        try:
            server = start_server(host, port)
            wait_until_healthy(base_url, server)
            echo(f"server: {base_url} (database {url})")
            spec = probe_machine()
            echo(render_spec(spec))
            with AgentClient(base_url, enrollment) as client:
                enrolled = client.enroll(spec)
            if enrolled.status is MachineStatus.pending:
                with db.writing() as session:
                    machines.approve(session, enrolled.machine_id)
            echo(f"enrolled this machine as {enrolled.machine_id} through the agent path")
            report = measure_quick(spec, echo, suite)
            with AgentClient(base_url, enrolled.machine_token) as client:
                stored, _created = client.upload_run(report)
            echo(f"uploaded run {stored.run_id}: {stored.result_count} results")
            echo(render_results(report.results))
            echo(first_recommendation(db))
            echo(f"dashboard: {base_url}/ (log in with the admin token printed at the first start)")
            echo(f"API and its docs: {base_url}/docs")
            if serve:
                config = settings.data_dir / "up-agent.json"
                AgentSettings(
                    server=base_url,
                    machine_id=enrolled.machine_id,
                    token=enrolled.machine_token,
                    outbox=settings.data_dir / "up-agent-outbox.db",
                    quiet_check=quiet_check,
                    poll_interval_s=AGENT_POLL_S,
                ).save(config)
                agent = start_agent(config)
                echo(
                    f"this machine's agent runs beside the server (config {config}): it heartbeats, so the"
                    " machine stays online, and runs the jobs queued for it"
                    f" (hwadvisor jobs create --machine {enrolled.machine_id})"
                )
                echo("serving until Ctrl-C")
                agent = serve_until_stopped(server, agent, config, echo)
        except KeyboardInterrupt:
            echo("stopping")
        finally:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the stopping short
            stop_child(agent, signal.SIGTERM, AGENT_STOP_S)  # first, so that it can still upload
            stop_child(server, signal.SIGINT, SERVER_STOP_S)
            db.dispose()


def serve_until_stopped(
    server: subprocess.Popen[bytes], agent: subprocess.Popen[bytes] | None, config: Path, echo: Callable[[str], None]
) -> subprocess.Popen[bytes] | None:
    """Until the server exits (or a signal interrupts): an agent that exits is reported, not restarted."""
    while server.poll() is None:
        if agent is not None and agent.poll() is not None:
            echo(
                f"the agent exited with code {agent.returncode} (its log is above); the server goes on serving."
                f" Start it again with: hwadvisor agent run --config {config}"
            )
            agent = None
        time.sleep(0.5)
    echo(f"the server exited with code {server.returncode}")
    return agent
