"""The address a client's failed logins are counted under is the connection's, unless the operator says a
proxy sets X-Forwarded-For (HWADVISOR_PROXY_HEADERS): uvicorn's own default trusts the header from
127.0.0.1, so any client on the server's host could pick a new address per guess. Checked on the real
server process, the way `hwadvisor server` starts uvicorn."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from testkit.processes import server_process
from tests.conftest import BACKENDS, ScratchDatabases

BAD = {"Authorization": "Bearer hwa_readonly_000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}


def test_a_forwarded_for_header_does_not_reset_the_failure_count(scratch: ScratchDatabases, tmp_path: Path) -> None:
    env = {"HWADVISOR_AUTH_FAILURES_PER_WINDOW": "3"}
    with server_process(scratch.new("sqlite"), tmp_path, env=env) as base, httpx.Client(base_url=base) as http:
        codes = [
            http.get("/api/v1/machines", headers={**BAD, "X-Forwarded-For": f"10.0.0.{n}"}).status_code
            for n in range(5)
        ]
    assert codes == [401, 401, 401, 429, 429]


@pytest.mark.parametrize("backend", BACKENDS)
def test_behind_a_proxy_a_long_forwarded_address_is_counted_not_a_500(
    backend: str, scratch: ScratchDatabases, tmp_path: Path
) -> None:
    env = {"HWADVISOR_PROXY_HEADERS": "1", "HWADVISOR_AUTH_FAILURES_PER_WINDOW": "2"}
    forwarded = {"X-Forwarded-For": "a" * 300}
    with server_process(scratch.new(backend), tmp_path, env=env) as base, httpx.Client(base_url=base) as http:
        codes = [http.get("/api/v1/machines", headers={**BAD, **forwarded}).status_code for _ in range(3)]
        login = http.post("/api/v1/session", json={"token": "nope"}, headers={"X-Forwarded-For": "b" * 300})
        # another address (the proxy says) has its own allowance
        other = http.get("/api/v1/machines", headers={**BAD, "X-Forwarded-For": "10.1.2.3"})
    assert codes == [401, 401, 429]
    assert login.status_code == 401, login.text
    assert other.status_code == 401
