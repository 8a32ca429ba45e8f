"""The API docs page (/docs) draws every operation in a real browser from the server's own copy of
Swagger UI: nothing is fetched from another host (a lab without internet), and its CSP holds."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx

from testkit.processes import ServerProcess


def test_the_docs_page_draws_the_api_from_this_server_alone(browser: Any, server: ServerProcess) -> None:
    openapi = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    operations = sum(len(methods) for methods in openapi["paths"].values())
    page = browser.new_page()
    elsewhere: list[str] = []
    errors: list[str] = []
    page.on(
        "request", lambda r: elsewhere.append(r.url) if urlsplit(r.url).netloc != urlsplit(server.url).netloc else None
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        page.goto(f"{server.url}/docs")
        page.wait_for_selector(".opblock", timeout=30_000)
        drawn = page.locator(".opblock").count()
        title = page.locator(".info .title").inner_text()
    finally:
        page.close()
    assert drawn == operations
    assert title.startswith("hwadvisor")
    assert elsewhere == []
    assert errors == []  # a CSP refusal is a console error
