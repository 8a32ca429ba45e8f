"""A slowloris against a real server process, with a client that shares its address asking beside it.

    .venv/bin/python -m benchmarks.slow_clients [--stalled 1500] [--seconds 40] [--read-timeout-s 20]
                                                [--cap 100] [--server-fds 1024]

Starts `hwadvisor server` on an embedded database, then opens ``--stalled`` connections from this host
that each send a request head one header line every 5 s and never finish it, reopening any the server
closes, for ``--seconds``; meanwhile one client from the same host asks `GET /healthz` once a second
on a new connection. Prints how many of its requests were answered and how fast, and how many file
descriptors the server process held at most, then the same client's figures with no attack. The
server runs with ``--read-timeout-s`` and ``--cap`` (HWADVISOR_READ_TIMEOUT_S,
HWADVISOR_MAX_CLIENT_CONNECTIONS; ``--cap 0 --read-timeout-s 1e6`` is the server as it was before
them), and with ``--server-fds`` file descriptors at most (1024: the soft limit most Linux distributions
give a process; this benchmark's own limit is left as it was).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from pathlib import Path

from testkit.processes import ServerProcess

LINE_EVERY_S = 5.0


async def stall(host: str, port: int, until: float, reopened: list[int]) -> None:
    """One slowloris connection: a head a line at a time, reopened whenever the server closes it."""
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.5)
            continue
        try:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            line = 0
            while time.monotonic() < until:
                await asyncio.sleep(LINE_EVERY_S)
                writer.write(f"X-Slow-{line}: 1\r\n".encode())
                await writer.drain()
                line += 1
                if reader.at_eof():
                    break
        except OSError:
            pass
        finally:
            writer.close()
        reopened[0] += 1


async def ask(host: str, port: int, until: float) -> tuple[int, int, list[float]]:
    """The client sharing the address: one `GET /healthz` a second on a new connection."""
    asked = answered = 0
    took: list[float] = []
    while time.monotonic() < until:
        asked += 1
        start = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 5)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status = await asyncio.wait_for(reader.readline(), 5)
            writer.close()
            if status.startswith(b"HTTP/1.1 200"):
                answered += 1
                took.append((time.monotonic() - start) * 1000)
        except (OSError, TimeoutError):
            pass
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
    return asked, answered, took


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


async def attack(server: ServerProcess, stalled: int, seconds: float) -> tuple[tuple[int, int, list[float]], int, int]:
    host, port = "127.0.0.1", server.port
    until = time.monotonic() + seconds
    reopened = [0]
    pid = server.proc.pid if server.proc else 0
    most = 0

    async def watch() -> None:
        nonlocal most
        while time.monotonic() < until:
            most = max(most, open_fds(pid))
            await asyncio.sleep(0.5)

    tasks = [asyncio.create_task(stall(host, port, until, reopened)) for _ in range(stalled)]
    watcher = asyncio.create_task(watch())
    await asyncio.sleep(2)  # the stalled connections in first
    client = await ask(host, port, until)
    await asyncio.gather(*tasks, watcher, return_exceptions=True)
    return client, most, reopened[0]


def with_fd_limit(limit: int, server: ServerProcess) -> ServerProcess:
    """Start ``server`` with at most ``limit`` file descriptors (a child keeps the limit it was started
    with); this process's own soft limit is put back after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        return server.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def report(name: str, client: tuple[int, int, list[float]]) -> str:
    asked, answered, took = client
    if not took:
        return f"{name}: {answered}/{asked} answered"
    p95 = sorted(took)[max(0, int(len(took) * 0.95) - 1)]
    return f"{name}: {answered}/{asked} answered, median {statistics.median(took):.1f} ms, p95 {p95:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stalled", type=int, default=1500)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--read-timeout-s", type=float, default=20.0)
    parser.add_argument("--cap", type=int, default=100)
    parser.add_argument("--server-fds", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HWADVISOR_READ_TIMEOUT_S": str(args.read_timeout_s), "HWADVISOR_MAX_CLIENT_CONNECTIONS": str(args.cap)}
        server = with_fd_limit(args.server_fds, ServerProcess(f"sqlite:///{tmp}/hwadvisor.db", Path(tmp), env=env))
        try:
            quiet = asyncio.run(ask("127.0.0.1", server.port, time.monotonic() + 10))
            client, most, reopened = asyncio.run(attack(server, args.stalled, args.seconds))
        finally:
            server.stop()
    print(
        f"server: read timeout {args.read_timeout_s:.0f} s, cap {args.cap or 'none'} per address; "
        f"{args.server_fds} file descriptors; {args.stalled} stalled connections for {args.seconds:.0f} s, "
        f"reopened {reopened} times"
    )
    print(report("no attack", quiet))
    print(report("during the attack, the same address", client))
    print(f"server file descriptors at most: {most}")


if __name__ == "__main__":
    main()
