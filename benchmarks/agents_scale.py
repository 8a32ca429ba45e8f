"""Many agents heartbeating and claiming against the real server process.

    .venv/bin/python -m benchmarks.agents_scale --postgres postgresql://postgres@127.0.0.1:5432/test \\
        [--agents 200] [--seconds 60]

Each simulated agent is an enrolled, approved machine (its own fingerprint and machine token) that
heartbeats every 15 s and, every 5 s, claims a job and finishes it at once (the intervals the agent
uses by default). Jobs are queued for any x86_64 machine, more than can be claimed. The figures:
claims, the claim latency p50/p99, and double claims (a job claimed twice, which must be zero),
checked both from the agents' side and against the jobs table.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from app.config import Settings
from app.db import migrate
from benchmarks.ingest import drop_postgres, scratch_postgres
from testkit.factories import machine_spec
from testkit.processes import ADMIN_HEADERS, ServerProcess

HEARTBEAT_S = 15.0
POLL_S = 5.0
SUITE = 'name = "tiny"\n[[grid]]\nworkloads = ["gemm_1024"]\n'


async def enroll(http: httpx.AsyncClient, count: int) -> list[str]:
    enrollment = (await http.post("/api/v1/tokens", json={"kind": "enrollment"}, headers=ADMIN_HEADERS)).json()["token"]
    tokens = []
    for _ in range(count):
        body = {"spec": machine_spec().model_dump(mode="json")}
        enrolled = (
            await http.post("/api/v1/agents/enroll", json=body, headers={"Authorization": f"Bearer {enrollment}"})
        ).json()
        (
            await http.post(f"/api/v1/machines/{enrolled['machine_id']}/approve", headers=ADMIN_HEADERS)
        ).raise_for_status()
        tokens.append(enrolled["machine_token"])
    return tokens


async def queue_jobs(http: httpx.AsyncClient, count: int) -> None:
    for _ in range(count):
        body = {"suite": "tiny", "suite_toml": SUITE, "selector": {"cpu_arch": "x86_64"}}
        (await http.post("/api/v1/jobs", json=body, headers=ADMIN_HEADERS)).raise_for_status()


async def agent(http: httpx.AsyncClient, token: str, until: float, claims: list[str], latencies: list[float]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    await asyncio.sleep(random.uniform(0, POLL_S))
    next_beat = 0.0
    while time.monotonic() < until:
        now = time.monotonic()
        if now >= next_beat:
            (await http.post("/api/v1/agents/heartbeat", json={"state": "idle"}, headers=headers)).raise_for_status()
            next_beat = now + HEARTBEAT_S
        start = time.perf_counter()
        response = await http.post("/api/v1/agents/claim", headers=headers)
        latencies.append((time.perf_counter() - start) * 1000)
        assert response.status_code in (200, 204), response.text
        if response.status_code == 200:
            job = response.json()["id"]
            claims.append(job)
            finish = await http.post(f"/api/v1/agents/jobs/{job}/finish", json={"status": "done"}, headers=headers)
            finish.raise_for_status()
        await asyncio.sleep(POLL_S)


async def simulate(base: str, agents: int, seconds: float) -> tuple[list[str], list[float]]:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        tokens = await enroll(http, agents)
        await queue_jobs(http, int(agents * seconds / POLL_S * 1.2))
        claims: list[str] = []
        latencies: list[float] = []
        until = time.monotonic() + seconds
        await asyncio.gather(*(agent(http, t, until, claims, latencies) for t in tokens))
        return claims, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", required=True, help="PostgreSQL URL of a server to make a scratch database on")
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    admin_url = Settings(database_url=args.postgres).resolved_database_url
    url = scratch_postgres(admin_url)
    try:
        migrate.upgrade(url)
        server = ServerProcess(url, Path(tempfile.mkdtemp(prefix="hwadvisor-scale-"))).start()
        try:
            claims, latencies = asyncio.run(simulate(server.url, args.agents, args.seconds))
        finally:
            server.stop()
        engine = create_engine(url)
        with engine.connect() as conn:
            attempts_over_one = conn.scalar(text("SELECT count(*) FROM jobs WHERE attempts > 1"))
            done = conn.scalar(text("SELECT count(*) FROM jobs WHERE status = 'done'"))
        engine.dispose()
    finally:
        drop_postgres(admin_url, url)
    doubles = sum(n - 1 for n in Counter(claims).values() if n > 1)
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    print(
        f"{args.agents} agents, {args.seconds:.0f} s on PostgreSQL: {len(latencies):,} claim calls "
        f"({len(latencies) / args.seconds:.1f}/s), {len(claims):,} jobs claimed, {done} done\n"
        f"  claim latency p50 {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms,"
        f" max {latencies[-1]:.1f} ms\n"
        f"  double claims seen by agents: {doubles}; jobs claimed more than once in the table: {attempts_over_one}"
    )


if __name__ == "__main__":
    main()
