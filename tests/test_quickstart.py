"""`hwadvisor up` as a real process, on SQLite and PostgreSQL: while it serves, this machine's agent
keeps the machine online and runs the jobs queued for it; SIGTERM stops the server and the agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from testkit import ROOT
from testkit.processes import ADMIN, ONE_CONFIG, Admin, free_port, wait_for
from tests.conftest import BACKENDS, ScratchDatabases


@pytest.mark.parametrize("backend", BACKENDS)
def test_up_keeps_its_agent_running_and_sigterm_stops_every_child(
    backend: str, scratch: ScratchDatabases, tmp_path: Path
) -> None:
    suite = tmp_path / "one.toml"
    suite.write_text(ONE_CONFIG)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "HWADVISOR_DATABASE_URL": scratch.new(backend),
        "HWADVISOR_DATA_DIR": str(tmp_path / "data"),
        "HWADVISOR_ADMIN_TOKEN": ADMIN,
        "HWADVISOR_HOST": "127.0.0.1",
    }
    log_path = tmp_path / "up.log"
    with log_path.open("w") as log:
        up = subprocess.Popen(
            [sys.executable, "-m", "app", "up", "--port", str(port), "--suite", str(suite), "--no-quiet-check"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    children: list[psutil.Process] = []
    try:
        wait_for("up to serve", lambda: up.poll() is None and "serving until Ctrl-C" in log_path.read_text(), 240, 0.5)
        output = log_path.read_text()
        assert up.poll() is None, output
        assert "this machine's agent runs beside the server" in output

        admin = Admin(url)
        (machine,) = admin.http.get("/api/v1/machines").json()["items"]
        job = admin.wait_until_done(admin.job(ONE_CONFIG, machine_id=machine["id"]), timeout_s=120)
        assert job["claimed_by"] == machine["id"], "the agent `up` started claimed and ran the job"
        shown = admin.http.get(f"/api/v1/machines/{machine['id']}").json()
        assert shown["status"] in ("online", "busy") and shown["agent_state"] is not None
        children = psutil.Process(up.pid).children(recursive=True)
        assert len(children) >= 2, "the server and the agent"

        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=120) == 0, log_path.read_text()
        _gone, alive = psutil.wait_procs(children, timeout=10)
        assert alive == [], f"children left running after SIGTERM: {alive}"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{url}/healthz", timeout=2)
    finally:
        if up.poll() is None:
            children = children or psutil.Process(up.pid).children(recursive=True)
            up.kill()
            up.wait()
        for child in children:
            if child.is_running():
                child.kill()
