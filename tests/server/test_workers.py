"""Several server workers on PostgreSQL: /metrics counts every worker's requests, whichever answers."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from testkit.processes import ServerProcess


def test_metrics_sum_every_worker(database_url: str, tmp_path: Path) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("several workers need PostgreSQL")
    server = ServerProcess(database_url, tmp_path, args=("--workers", "2")).start()
    try:
        sent = 60
        for _ in range(sent):
            with httpx.Client() as fresh:  # a new connection each time, so both workers take some
                assert fresh.get(f"{server.url}/healthz").status_code == 200
        pattern = re.compile(r'hwadvisor_http_requests_total\{method="GET",route="/healthz",status="200"\} (\S+)')
        for _ in range(6):
            with httpx.Client() as fresh:
                text = fresh.get(f"{server.url}/metrics").text
            match = pattern.search(text)
            assert match is not None, text[:2000]
            assert float(match.group(1)) >= sent  # the sum over workers, not one worker's share
        writers = {p.name.rsplit("_", 1)[-1] for p in (tmp_path / "metrics").glob("counter_*.db")}
        assert len(writers) == 2, writers  # both workers counted requests
    finally:
        server.stop()
