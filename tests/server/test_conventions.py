"""HEAD answers as GET without the body; a redirect stays on this server whatever Host the request
named (app/server/conventions.py)."""

from __future__ import annotations

import pytest

from app.server.conventions import on_this_server
from testkit.factories import Api


@pytest.mark.parametrize("path", ["/healthz", "/api/v1/machines", "/", "/metrics", "/api/v1/catalog"])
def test_head_answers_as_get_without_the_body(api: Api, path: str) -> None:
    got = api.client.get(path, headers=api.admin)
    head = api.client.head(path, headers=api.admin)
    assert head.status_code == got.status_code == 200, head.text
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    if "content-length" in got.headers and path != "/metrics":  # /metrics counts the GET just made
        assert head.headers["content-length"] == got.headers["content-length"]


def test_head_keeps_the_routes_own_checks(api: Api) -> None:
    assert api.client.head("/api/v1/machines").status_code == 401  # no token: as GET
    assert api.client.head("/api/v1/runs", headers=api.admin).status_code == 405  # POST only: as GET


def test_head_is_logged_as_head(api: Api) -> None:
    api.client.head("/healthz")
    metrics = api.client.get("/metrics").text
    assert 'method="HEAD"' in metrics


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080"])
def test_a_trailing_slash_redirect_stays_on_this_server(api: Api, host: str) -> None:
    answer = api.client.get("/api/v1/machines/", headers={**api.admin, "Host": host}, follow_redirects=False)
    assert answer.status_code == 307
    assert answer.headers["location"] == "/api/v1/machines"


@pytest.mark.parametrize(
    ("location", "relative"),
    [
        ("http://evil.example/api/v1/machines?page=2", "/api/v1/machines?page=2"),
        ("https://evil.example:8443/docs#top", "/docs#top"),
        ("//evil.example/x", "/x"),
        ("http://evil.example//evil.example/x", "/evil.example/x"),
        ("/already/relative?q=1", "/already/relative?q=1"),
        ("http://evil.example", "/"),
    ],
)
def test_on_this_server_keeps_path_query_and_fragment_only(location: str, relative: str) -> None:
    assert on_this_server(location) == relative
