"""A real server process on SQLite with the hand-made lab in it, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.db import migrate
from app.web import VENDOR_CHART
from testkit.browser import chromium_installed, launch
from testkit.factories import Api
from testkit.lab import build, cpu_run
from testkit.processes import ADMIN, ServerProcess

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"


def _browser_or_skip() -> None:
    missing = [what for what, ok in (("Chromium", chromium_installed()), ("Chart.js", VENDOR_CHART.exists())) if not ok]
    if missing:
        message = f"dashboard tests need {' and '.join(missing)} (apt-get install chromium; ./scripts/setup)"
        if os.environ.get("HWADVISOR_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    _browser_or_skip()
    data = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{data / 'hwadvisor.db'}"
    migrate.upgrade(url)
    process = ServerProcess(url, data).start()
    with httpx.Client(base_url=process.url, timeout=30) as client:
        api = Api(client, ADMIN)
        build(api)
        cpu_run(api)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = launch(playwright)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS
