"""PostgreSQL restarted under load: the server answers 503 while it is down, recovers by itself,
and the agents' outboxes deliver every result afterwards.

    .venv/bin/python -m benchmarks.faults --postgres postgresql://postgres@127.0.0.1:5432/test
        [--agents 10] [--before 10] [--down 15] [--after 15]

Needs to stop and start the local PostgreSQL cluster (pg_ctlcluster; run as root or postgres).
A real server process (one uvicorn worker) on that database; each simulated agent measures nothing
but goes through the agent's own delivery path: every run is written to its durable outbox
(app/agent/outbox.py) first, then uploaded with app/agent/client.py, and kept on ServerUnavailable
to be retried with backoff, exactly as the daemon's drain does. A prober polls /healthz and an API
read every 0.2 s. Timeline: ``before`` s of load, PostgreSQL stopped for ``down`` s, started again,
``after`` s of load, then the agents stop producing and drain. The server process is never restarted.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from sqlalchemy import create_engine, func, select

from app.agent.client import AgentClient, ServerUnavailable
from app.agent.outbox import Outbox
from app.db import migrate
from app.db.models import ResultRow
from testkit.factories import machine_spec, result
from testkit.processes import ADMIN, ServerProcess

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}
RESULTS_PER_RUN = 10


def cluster(action: str) -> None:
    version = sorted(Path("/etc/postgresql").iterdir())[0].name
    subprocess.run(
        [
            "pg_ctlcluster",
            "--skip-systemctl-redirect",
            version,
            "main",
            action,
            *(["-m", "fast"] if action == "stop" else []),
        ],
        check=True,
    )


class Agent(threading.Thread):
    def __init__(self, base: str, enrollment: str, home: Path, produce: threading.Event, stop: threading.Event) -> None:
        super().__init__()
        self.spec = machine_spec()
        with AgentClient(base, enrollment) as client:
            enrolled = client.enroll(self.spec)
        httpx.post(f"{base}/api/v1/machines/{enrolled.machine_id}/approve", headers=ADMIN_HEADERS).raise_for_status()
        self.client = AgentClient(base, enrolled.machine_token)
        self.outbox = Outbox(home / f"{enrolled.machine_id}.db")
        self.produce, self.stop = produce, stop
        self.written = 0
        self.deferred = 0

    def run(self) -> None:
        results = [result(batch_size=b) for b in range(1, RESULTS_PER_RUN + 1)]
        while not self.stop.is_set():
            if self.produce.is_set():
                run_id = self.outbox.open_run(suite="quick", agent_version="load", machine=self.spec, job_id=None)
                for seq, item in enumerate(results):
                    self.outbox.add_result(run_id, seq, item)
                self.outbox.close_run(run_id)
                self.written += RESULTS_PER_RUN
            try:
                for report in self.outbox.ready():
                    self.client.upload_run(report)
                    self.outbox.delete(report.run_id)
            except ServerUnavailable:
                self.deferred += 1
            self.stop.wait(0.5)

    def close(self) -> None:
        self.client.close()
        self.outbox.close()


def probe(base: str, stop: threading.Event, seen: list[tuple[float, str, int]]) -> None:
    with httpx.Client(base_url=base, timeout=5, headers=ADMIN_HEADERS) as http:
        while not stop.is_set():
            for path in ("/healthz", "/api/v1/machines?limit=1"):
                try:
                    seen.append((time.monotonic(), path, http.get(path).status_code))
                except httpx.HTTPError:
                    seen.append((time.monotonic(), path, 0))
            stop.wait(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--before", type=float, default=10)
    parser.add_argument("--down", type=float, default=15)
    parser.add_argument("--after", type=float, default=15)
    args = parser.parse_args()
    migrate.downgrade(args.postgres, "base")
    migrate.upgrade(args.postgres)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        server = ServerProcess(args.postgres, home).start()
        produce, stop, probe_stop = threading.Event(), threading.Event(), threading.Event()
        seen: list[tuple[float, str, int]] = []
        try:
            enrollment = httpx.post(
                f"{server.url}/api/v1/tokens", json={"kind": "enrollment"}, headers=ADMIN_HEADERS
            ).json()["token"]
            agents = [Agent(server.url, enrollment, home, produce, stop) for _ in range(args.agents)]
            prober = threading.Thread(target=probe, args=(server.url, probe_stop, seen))
            produce.set()
            for thread in [*agents, prober]:
                thread.start()
            time.sleep(args.before)
            cluster("stop")
            down_at = time.monotonic()
            time.sleep(args.down)
            backlog = sum(a.outbox.pending() for a in agents)
            start_at = time.monotonic()
            cluster("start")
            up_at = time.monotonic()
            caught_up = None
            while time.monotonic() < up_at + args.after:
                if caught_up is None and sum(a.outbox.pending() for a in agents) == 0:
                    caught_up = time.monotonic() - up_at
                time.sleep(0.1)
            produce.clear()
            deadline = time.monotonic() + 120
            while any(a.outbox.pending() for a in agents) and time.monotonic() < deadline:
                time.sleep(0.5)
            drained_at = time.monotonic()
            stop.set()
            probe_stop.set()
            for thread in [*agents, prober]:
                thread.join()
            pid_alive = server.proc is not None and server.proc.poll() is None
        finally:
            server.stop()
        written = sum(a.written for a in agents)
        pending = sum(a.outbox.pending() for a in agents)
        deferred = sum(a.deferred for a in agents)
        for a in agents:
            a.close()
    engine = create_engine(args.postgres.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as connection:
        stored = connection.scalar(select(func.count()).select_from(ResultRow))
    engine.dispose()
    during = Counter(f"{path} {code}" for t, path, code in seen if down_at < t < start_at)
    after = [(t, code) for t, path, code in seen if t > start_at and path == "/healthz"]
    recovered = next((t - start_at for t, code in after if code == 200), None)
    later = Counter(f"{path} {code}" for t, path, code in seen if recovered is not None and t > start_at + recovered)
    print(f"{args.agents} agents, PostgreSQL stopped for {args.down:.0f} s (stop -m fast, then start)")
    print(f"  while down: {dict(during)}")
    print(
        f"  healthz 200 again {recovered:.1f} s after `pg_ctlcluster start` was called (took {up_at - start_at:.1f} s)"
        if recovered is not None
        else "  NEVER recovered"
    )
    print(f"  after recovery: {dict(later)}")
    print(
        f"  agents: {deferred} delivery attempts deferred, {backlog} runs waiting in outboxes when PostgreSQL came"
        f" back; backlog delivered {caught_up:.1f} s after its start"
        if caught_up is not None
        else "  agents: backlog NOT delivered during the recovery phase"
    )
    print(f"  after the load stopped, outboxes empty in {drained_at - up_at - args.after:.1f} s")
    print(
        f"  results written to outboxes {written}, stored {stored}, left in outboxes {pending}: "
        + ("nothing lost" if stored == written and pending == 0 else "MISMATCH")
    )
    print(f"  server process the same throughout: {pid_alive}")


if __name__ == "__main__":
    main()
