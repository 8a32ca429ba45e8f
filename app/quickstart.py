"""`hwadvisor up`: the whole product on one machine, on the embedded SQLite default.

Starts the server, enrols this machine through the agent path (probe -> enrollment token ->
machine token over HTTP), approves it as the local operator, measures the quick suite, uploads
the run with the machine token, prints what was measured, and keeps serving until Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx

from app.agent.client import AgentClient
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


def measure_quick(spec: MachineSpec, echo: Callable[[str], None]) -> RunReport:
    """The quick suite on this machine, as the agent runs it."""
    suite = load_suite("quick")
    started = datetime.now(UTC)

    def progress(index: int, total: int, config: BenchConfig, eta: float | None) -> None:
        left = f"~{eta:.0f} s left" if eta is not None else "estimating"
        echo(f"[{index}/{total}] {left}  {config.label()}")

    return run_report(suite, spec, run_suite(suite, spec, progress=progress), started_at=started)


def first_recommendation(db: Database, workload: str = "resnet50") -> str:
    """What the recommender says now: this machine's configs ranked, then catalog hardware beside
    them (the answers of `hwadvisor recommend resnet50` and `... --catalog`)."""
    parts = []
    for scope, command in ((Scope.owned, ""), (Scope.catalog, " --catalog")):
        spec = WorkloadSpec(workload=workload, scope=scope, limit=5)
        with db.reading() as session:
            answer = recommend(session, spec)
        parts.append(f"\nrecommended for {spec.label} (hwadvisor recommend {workload}{command}):")
        parts.append(render(answer, rejected=3))
    return "\n".join(parts) + "\nbudgets, SLOs, objectives: hwadvisor recommend --help"


def up(settings: Settings, *, host: str, port: int, echo: Callable[[str], None], serve: bool = True) -> None:
    if not _port_free(host, port):
        raise ConfigError(f"port {port} on {host} is in use", hint="choose another with --port")
    url = settings.resolved_database_url
    migrate.upgrade(url)
    db = Database(url)
    with db.writing() as session:
        _row, enrollment = tokens.issue(
            session, kind=TokenKind.enrollment, note="hwadvisor up", max_uses=1, expires_in=timedelta(hours=1)
        )
    base_url = f"http://{host}:{port}"
    server = start_server(host, port)
    try:
        wait_until_healthy(base_url, server)
        echo(f"server: {base_url} (database {url})")
        spec = probe_machine()
        echo(render_spec(spec))
        with AgentClient(base_url, enrollment) as agent:
            enrolled = agent.enroll(spec)
        if enrolled.status is MachineStatus.pending:
            with db.writing() as session:
                machines.approve(session, enrolled.machine_id)
        echo(f"enrolled this machine as {enrolled.machine_id} through the agent path")
        report = measure_quick(spec, echo)
        with AgentClient(base_url, enrolled.machine_token) as agent:
            stored, _created = agent.upload_run(report)
        echo(f"uploaded run {stored.run_id}: {stored.result_count} results")
        echo(render_results(report.results))
        echo(first_recommendation(db))
        echo(f"dashboard: {base_url}/ (log in with the admin token printed at the first start)")
        echo(f"API and its docs: {base_url}/docs")
        if serve:
            echo("serving until Ctrl-C")
            server.wait()
    except KeyboardInterrupt:
        echo("stopping")
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
        db.dispose()
