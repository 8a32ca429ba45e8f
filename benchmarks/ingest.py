"""Ingest speed against the real server process, on SQLite and on PostgreSQL.

    .venv/bin/python -m benchmarks.ingest [--postgres URL] [--seconds 20]

1. Batched ingest: one agent uploads runs of 1,000 results back to back; results stored per second.
2. Concurrency: 32 agents each post a single run (10 results) once a second; latency p50/p99.
3. Saturation: the same 32 clients posting back to back; runs/s (by Little's law their latency
   is 32 / throughput, so this line measures capacity, not the latency an agent sees).

Each figure is wall-clock over HTTP on loopback, the client sharing the machine's cores with the
server; the stored row count is checked against what was sent.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url

from app.config import Settings
from app.db import migrate
from app.db.models import ResultRow
from testkit.factories import Api, machine_spec, result, run_report
from testkit.processes import ADMIN, server_process

BATCH = 1000
SMALL = 10
CLIENTS = 32


def _enroll(base: str) -> tuple[str, str]:
    """(a machine token, the machine's spec as JSON) for one enrolled, approved machine."""
    spec = machine_spec()
    with httpx.Client(base_url=base, timeout=30) as http:
        _machine_id, token = Api(http, ADMIN).enroll(spec)
    return token, spec.model_dump_json()


def _bodies(spec_json: str, n_runs: int, n_results: int) -> list[bytes]:
    from app.contracts import MachineSpec

    spec = MachineSpec.model_validate_json(spec_json)
    results = [result(batch_size=b) for b in range(1, n_results + 1)]
    return [run_report(spec, results=results).model_dump_json().encode() for _ in range(n_runs)]


def batched(base: str, token: str, spec_json: str, seconds: float) -> dict[str, float]:
    bodies = _bodies(spec_json, max(3, int(seconds * 8)), BATCH)
    headers = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
    sent = 0
    with httpx.Client(base_url=base, timeout=60) as http:
        http.post("/api/v1/runs", content=bodies.pop(), headers=headers).raise_for_status()  # warm-up
        start = time.perf_counter()
        while bodies and time.perf_counter() - start < seconds:
            response = http.post("/api/v1/runs", content=bodies.pop(), headers=headers)
            assert response.status_code == 201, response.text
            sent += BATCH
        elapsed = time.perf_counter() - start
    return {"results": sent, "seconds": elapsed, "results_per_s": sent / elapsed}


async def _concurrent(
    base: str, token: str, bodies: list[bytes], seconds: float, interval_s: float | None
) -> list[float]:
    headers = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:

        async def client(index: int) -> None:
            if interval_s:  # spread the agents' first posts over one interval, as real agents are
                await asyncio.sleep(interval_s * index / CLIENTS)
            while bodies and time.perf_counter() < deadline:
                body = bodies.pop()
                start = time.perf_counter()
                response = await http.post("/api/v1/runs", content=body, headers=headers)
                took = time.perf_counter() - start
                latencies.append(took * 1000)
                assert response.status_code == 201, response.text
                if interval_s:
                    await asyncio.sleep(max(0.0, interval_s - took))

        await asyncio.gather(*(client(i) for i in range(CLIENTS)))
    return latencies


def concurrent(
    base: str, token: str, spec_json: str, seconds: float, interval_s: float | None = None
) -> dict[str, float]:
    """32 clients posting single runs: back to back (saturation), or each once per interval_s."""
    bodies = _bodies(spec_json, int(seconds * 400), SMALL)
    latencies = asyncio.run(_concurrent(base, token, bodies, seconds, interval_s))
    latencies.sort()
    return {
        "requests": len(latencies),
        "requests_per_s": len(latencies) / seconds,
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1],
    }


def stored(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.scalar(select(func.count()).select_from(ResultRow)) or 0)
    finally:
        engine.dispose()


def scratch_postgres(admin_url: str) -> str:
    name = f"hwadvisor_bench_{int(time.time())}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def drop_postgres(admin_url: str, url: str) -> None:
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", help="PostgreSQL URL of a server to make a scratch database on")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between one agent's posts (paced)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hwadvisor-bench-"))
    targets = {"sqlite": f"sqlite:///{tmp / 'bench.db'}"}
    if args.postgres:
        targets["postgresql"] = scratch_postgres(Settings(database_url=args.postgres).resolved_database_url)
    for backend, url in targets.items():
        migrate.upgrade(url)
        with server_process(url, tmp) as base:
            token, spec_json = _enroll(base)
            before = stored(url)
            batch = batched(base, token, spec_json, args.seconds)
            paced = concurrent(base, token, spec_json, args.seconds, interval_s=args.interval)
            saturated = concurrent(base, token, spec_json, args.seconds)
            sent = batch["results"] + BATCH + (paced["requests"] + saturated["requests"]) * SMALL
            exact = stored(url) - before == sent
        print(
            f"{backend}: batched ingest {batch['results_per_s']:,.0f} results/s "
            f"({batch['results']:,} in {batch['seconds']:.1f} s)\n"
            f"  {CLIENTS} agents, one {SMALL}-result run each every {args.interval:g} s: "
            f"p50 {paced['p50_ms']:.1f} ms, p99 {paced['p99_ms']:.1f} ms ({paced['requests']:,} runs)\n"
            f"  {CLIENTS} clients back to back (saturation): {saturated['requests_per_s']:,.0f} runs/s, "
            f"p50 {saturated['p50_ms']:.1f} ms, p99 {saturated['p99_ms']:.1f} ms\n"
            f"  stored rows == rows sent: {exact}"
        )
    if args.postgres:
        drop_postgres(Settings(database_url=args.postgres).resolved_database_url, targets["postgresql"])


if __name__ == "__main__":
    main()
