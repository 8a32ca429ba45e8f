"""Identical creates at the same moment: one wins, the others are told they lost (409), never a 500.

PostgreSQL at READ COMMITTED lets every one of them pass its "does it exist?" check before any commits;
the unique key then refuses all but the first. SQLite's one writer at a time never races. The requests
go to the real server process from threads released together, as several clients would send them."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from testkit.factories import machine_spec
from testkit.processes import ADMIN, server_process
from tests.conftest import BACKENDS, ScratchDatabases

AT_ONCE = 4
ROUNDS = 3
Send = Callable[[httpx.Client, int], httpx.Response]


def together(base: str, send: Send) -> list[int]:
    """Each of AT_ONCE clients sends its request as soon as all are ready; their status codes."""
    codes = [0] * AT_ONCE
    ready = threading.Barrier(AT_ONCE)

    def client(i: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            ready.wait()
            codes[i] = send(http, i).status_code

    threads = [threading.Thread(target=client, args=(i,)) for i in range(AT_ONCE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


def one_won(codes: list[int], created: int) -> bool:
    return sorted(codes) == [created] + [409] * (AT_ONCE - 1) or codes == [created] * AT_ONCE


@pytest.mark.parametrize("backend", BACKENDS)
def test_racing_creates_are_one_success_and_conflicts(backend: str, scratch: ScratchDatabases, tmp_path: Path) -> None:
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with server_process(scratch.new(backend), tmp_path) as base, httpx.Client(base_url=base) as http:
        machines = []
        for _ in range(2):
            token = http.post("/api/v1/tokens", json={"kind": "enrollment"}, headers=admin).json()["token"]
            spec = machine_spec().model_dump(mode="json")
            enrolled = http.post(
                "/api/v1/agents/enroll", json={"spec": spec}, headers={"Authorization": f"Bearer {token}"}
            )
            machines.append(enrolled.json()["machine_id"])
        tokens = [
            http.post("/api/v1/tokens", json={"kind": "enrollment"}, headers=admin).json()["token"]
            for _ in range(AT_ONCE * ROUNDS)
        ]
        for round_ in range(ROUNDS):
            race(base, machines, tokens[round_ * AT_ONCE : (round_ + 1) * AT_ONCE])


def race(base: str, machines: list[str], tokens: list[str]) -> None:
    """One round: the same new catalog entry, cluster and machine, each sent AT_ONCE times together."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    entry = f"race-{secrets.token_hex(3)}"
    catalog = together(
        base,
        lambda c, _i: c.put(
            f"/api/v1/catalog/{entry}", json={"kind": "gpu", "vendor": "X", "name": entry}, headers=admin
        ),
    )
    body = {"name": entry, "machines": machines, "network_gb_s": 10}
    cluster = together(base, lambda c, _i: c.post("/api/v1/clusters", json=body, headers=admin))
    spec = machine_spec().model_dump(mode="json")
    enrol = together(
        base,
        lambda c, i: c.post(
            "/api/v1/agents/enroll", json={"spec": spec}, headers={"Authorization": f"Bearer {tokens[i]}"}
        ),
    )
    assert 500 not in catalog + cluster + enrol, (catalog, cluster, enrol)
    assert one_won(cluster, 201), cluster
    assert one_won(enrol, 201), enrol
    assert set(catalog) <= {200, 201, 409}, catalog
