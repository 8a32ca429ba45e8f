"""Real processes for integration tests: the server (uvicorn on a loopback port) and agents."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from testkit import ROOT

ADMIN = "process-admin-token-0123456789abcdef"
ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


# A suite of one config of a fraction of a second: a job an agent process finishes in seconds.
ONE_CONFIG = """
name = "one"
[measure]
warmup_budget_s = 0.05
time_budget_s = 0.2
[[grid]]
workloads = ["lstm"]
batch_sizes = [4]
threads = [1]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, check: Callable[[], Any], timeout_s: float = 60.0, every_s: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = check()
        except httpx.TransportError:
            value = None
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


class ServerProcess:
    """`hwadvisor server` as a child process; stop() is SIGTERM, kill() is SIGKILL."""

    def __init__(
        self,
        database_url: str,
        data_dir: Path,
        *,
        port: int | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ):
        self.args = args
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "HWADVISOR_DATABASE_URL": database_url,
            "HWADVISOR_ADMIN_TOKEN": ADMIN,
            "HWADVISOR_DATA_DIR": str(data_dir),
            **(env or {}),
        }
        self.log_path = data_dir / f"server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        log = self.log_path.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "server", "--port", str(self.port), *self.args],
            env=self.env,
            stdout=log,
            stderr=log,
        )
        log.close()

        def healthy() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"server exited:\n{self.log_path.read_text()}")
            return httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200

        wait_for("the server to answer", healthy, timeout_s=30)
        return self

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextmanager
def server_process(database_url: str, data_dir: Path, **kwargs: Any) -> Iterator[str]:
    server = ServerProcess(database_url, data_dir, **kwargs).start()
    try:
        yield server.url
    finally:
        server.stop()


class AgentProcess:
    """`hwadvisor agent ...` as a child process with its own config, outbox and instance name."""

    def __init__(self, home: Path, instance: str) -> None:
        self.home = home / instance
        self.home.mkdir(parents=True, exist_ok=True)
        self.config = self.home / "agent.json"
        self.env = {**os.environ, "HWADVISOR_AGENT_INSTANCE": instance, "HWADVISOR_DATA_DIR": str(self.home)}
        self.log_path = self.home / "agent.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", "agent", *args, "--config", str(self.config)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=ROOT,
        )

    def enroll(self, server: str, token: str) -> str:
        done = self.command("enroll", "--server", server, "--token", token, "--outbox", str(self.home / "outbox.db"))
        assert done.returncode == 0, done.stderr
        settings = json.loads(self.config.read_text())
        settings["poll_interval_s"] = 0.2
        self.config.write_text(json.dumps(settings))
        return str(settings["machine_id"])

    def start(self, *args: str) -> AgentProcess:
        log = self.log_path.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "agent", "run", "--config", str(self.config), "--no-quiet-check", *args],
            env=self.env,
            stdout=log,
            stderr=log,
            cwd=ROOT,
        )
        log.close()
        return self

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self, timeout_s: float = 60) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout_s)

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""


class Admin:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, headers=ADMIN_HEADERS, timeout=10)

    def enrollment_token(self) -> str:
        response = self.http.post("/api/v1/tokens", json={"kind": "enrollment"})
        response.raise_for_status()
        return str(response.json()["token"])

    def approve(self, machine_id: str) -> None:
        self.http.post(f"/api/v1/machines/{machine_id}/approve").raise_for_status()

    def job(self, suite_toml: str, **target: Any) -> str:
        response = self.http.post("/api/v1/jobs", json={"suite": "tiny", "suite_toml": suite_toml, **target})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def agent_state(self, machine_id: str) -> str | None:
        state = self.http.get(f"/api/v1/machines/{machine_id}").json()["agent_state"]
        return str(state) if state else None

    def get_job(self, job_id: str) -> dict[str, Any]:
        return dict(self.http.get(f"/api/v1/jobs/{job_id}").json())

    def wait_until_done(self, job_id: str, timeout_s: float = 120) -> dict[str, Any]:
        job: dict[str, Any] = wait_for(
            f"job {job_id} to finish",
            lambda: (j := self.get_job(job_id))["status"] == "done" and j,
            timeout_s=timeout_s,
        )
        return job

    def results(self, **params: Any) -> list[dict[str, Any]]:
        page = self.http.get("/api/v1/results", params={"limit": 1000, **params}).json()
        return list(page["items"])


@contextmanager
def stalled_reader(base: str, path: str) -> Iterator[socket.socket]:
    """A client that asks the server at ``base`` for ``path`` (as the admin) and never reads a byte of
    the answer: a small receive window, so the server's stream soon waits on it."""
    address = urlsplit(base)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    try:
        sock.connect((address.hostname or "127.0.0.1", address.port or 80))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN}\r\n\r\n".encode())
        yield sock
    finally:
        sock.close()
