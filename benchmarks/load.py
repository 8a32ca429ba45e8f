"""50 agents uploading for 60 s while people read the dashboard: nothing lost, nothing refused.

    .venv/bin/python -m benchmarks.load [--agents 50] [--readers 5] [--seconds 60] [--postgres URL]

Against the real server process (one uvicorn worker), on SQLite and, with --postgres, PostgreSQL:
each simulated agent enrols, then heartbeats and uploads a 10-result run every second, as agents do
between configs; each reader loads what the dashboard pages ask for (fleet page and status counts,
a machine's results, a recommendation over the whole fleet) back to back. At the end the stored
result count must equal the sent count exactly, and every request must have succeeded.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from sqlalchemy import create_engine, func, select

from app.db import migrate
from app.db.models import ResultRow
from testkit.factories import Api, machine_spec, result, run_report
from testkit.processes import ADMIN, ServerProcess

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}
RESULTS_PER_RUN = 10


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: Counter[str] = Counter()
        self.latency: dict[str, list[float]] = {"upload": [], "heartbeat": [], "read": []}
        self.sent_results = 0

    def record(self, kind: str, response: httpx.Response | None, seconds: float, error: str | None = None) -> None:
        with self.lock:
            self.latency[kind].append(seconds)
            self.statuses[f"{kind} {response.status_code if response is not None else error}"] += 1


def agent(base: str, stop: threading.Event, tally: Tally) -> None:
    spec = machine_spec()
    with httpx.Client(base_url=base, timeout=30) as http:
        _machine_id, token = Api(http, ADMIN).enroll(spec)
        headers = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
        results = [result(batch_size=b) for b in range(1, RESULTS_PER_RUN + 1)]
        while not stop.is_set():
            started = time.perf_counter()
            body = run_report(spec, results=results).model_dump_json()
            try:
                response = http.post("/api/v1/runs", content=body, headers=headers)
                tally.record("upload", response, time.perf_counter() - started)
                if response.status_code == 201:
                    with tally.lock:
                        tally.sent_results += RESULTS_PER_RUN
            except httpx.HTTPError as exc:
                tally.record("upload", None, time.perf_counter() - started, exc.__class__.__name__)
            beat = time.perf_counter()
            try:
                response = http.post("/api/v1/agents/heartbeat", json={"state": "running"}, headers=headers)
                tally.record("heartbeat", response, time.perf_counter() - beat)
            except httpx.HTTPError as exc:
                tally.record("heartbeat", None, time.perf_counter() - beat, exc.__class__.__name__)
            stop.wait(max(0.0, 1.0 - (time.perf_counter() - started)))


def reader(base: str, stop: threading.Event, tally: Tally) -> None:
    ask = {"workload": "resnet50", "task": "infer", "scope": "catalog", "constraints": {"power_budget_w": 700}}
    with httpx.Client(base_url=base, timeout=60, headers=ADMIN_HEADERS) as http:
        while not stop.is_set():
            machines = None
            for method, path, body in (
                ("GET", "/api/v1/machines?limit=50", None),
                ("GET", "/api/v1/machines?status=online&limit=1", None),
                ("GET", "/api/v1/jobs?limit=50", None),
                ("POST", "/api/v1/recommendations", ask),
            ):
                started = time.perf_counter()
                try:
                    response = http.request(method, path, json=body)
                    tally.record("read", response, time.perf_counter() - started)
                    if path.startswith("/api/v1/machines?limit") and response.status_code == 200:
                        machines = response.json()["items"]
                except httpx.HTTPError as exc:
                    tally.record("read", None, time.perf_counter() - started, exc.__class__.__name__)
            if machines:
                started = time.perf_counter()
                response = http.get(f"/api/v1/results?machine_id={machines[0]['id']}&limit=100")
                tally.record("read", response, time.perf_counter() - started)


def run(url: str, data: Path, agents: int, readers: int, seconds: float) -> None:
    server = ServerProcess(url, data).start()
    tally = Tally()
    stop = threading.Event()
    try:
        threads = [threading.Thread(target=agent, args=(server.url, stop, tally)) for _ in range(agents)]
        threads += [threading.Thread(target=reader, args=(server.url, stop, tally)) for _ in range(readers)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        stop.set()
        for thread in threads:
            thread.join()
    finally:
        server.stop()
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as connection:
        stored = connection.scalar(select(func.count()).select_from(ResultRow))
    engine.dispose()
    failures = {k: v for k, v in tally.statuses.items() if not k.endswith((" 200", " 201"))}
    print(f"  requests: {dict(sorted(tally.statuses.items()))}")
    for kind, values in tally.latency.items():
        if values:
            ordered = sorted(values)
            p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
            print(
                f"  {kind:<9} n={len(values):>5}  p50 {statistics.median(values) * 1000:7.1f} ms"
                f"  p99 {p99 * 1000:7.1f} ms"
            )
    print(
        f"  results sent {tally.sent_results}, stored {stored}: "
        + ("equal" if stored == tally.sent_results else "DIFFERENT")
    )
    print(f"  errors: {sum(failures.values())} {failures or ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--readers", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--postgres", help="Also on this PostgreSQL database (emptied first).")
    args = parser.parse_args()
    targets = [("SQLite", None)] + ([("PostgreSQL", args.postgres)] if args.postgres else [])
    for name, url in targets:
        with tempfile.TemporaryDirectory() as tmp:
            if url is None:
                url = f"sqlite:///{Path(tmp) / 'hwadvisor.db'}"
            else:
                migrate.downgrade(url, "base")
            migrate.upgrade(url)
            print(f"{name}: {args.agents} agents, {args.readers} readers, {args.seconds:.0f} s")
            run(url, Path(tmp), args.agents, args.readers, args.seconds)


if __name__ == "__main__":
    main()
