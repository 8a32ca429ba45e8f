"""The dashboard's session: the cookie carries a session id, never the long-lived token; logging
out, revoking the key, or changing the environment's admin token ends it."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from app.config import Settings
from app.db.engine import Database
from app.db.models import SessionRow, utcnow
from app.server.app import create_app
from app.server.deps import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from testkit.factories import Api


def _log_in(api: Api, token: str) -> str:
    response = api.client.post("/api/v1/session", json={"token": token})
    assert response.status_code == 200, response.text
    return str(response.cookies[SESSION_COOKIE])


def _as_cookie(api: Api, cookie: str) -> int:
    """GET a reader's route with only this session cookie, as a copied cookie would be used."""
    _only(api.client, cookie)
    return int(api.client.get("/api/v1/machines").status_code)


def _only(client: TestClient, cookie: str) -> None:
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, cookie)


def test_the_cookie_holds_a_session_not_the_token(api: Api) -> None:
    key = api.token("readonly")
    cookie = _log_in(api, key)
    assert key not in cookie and key.split(".", 1)[1] not in cookie and cookie.startswith("hws_")
    assert api.client.get("/api/v1/session").json() == {"kind": "readonly"}
    assert api.client.get("/api/v1/machines").status_code == 200
    assert _log_in(api, api.admin_token) != cookie  # the env admin token gets a session too


def test_logging_out_ends_the_session_even_for_a_copy_of_the_cookie(api: Api) -> None:
    cookie = _log_in(api, api.token("readonly"))
    csrf = api.client.cookies[CSRF_COOKIE]
    assert api.client.delete("/api/v1/session", headers={CSRF_HEADER: csrf}).status_code == 204
    assert _as_cookie(api, cookie) == 401
    assert api.client.get("/api/v1/session").json() == {"kind": None}


def test_revoking_the_key_ends_its_sessions(api: Api) -> None:
    key = api.token("readonly")
    cookie = _log_in(api, key)
    assert _as_cookie(api, cookie) == 200
    token_id = key.split("_")[2].split(".")[0]
    assert api.client.delete(f"/api/v1/tokens/{token_id}", headers=api.admin).status_code == 200
    assert _as_cookie(api, cookie) == 401


def test_an_expired_session_is_refused(api: Api, db: Database) -> None:
    cookie = _log_in(api, api.token("readonly"))
    with db.writing() as session:
        session.execute(update(SessionRow).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert _as_cookie(api, cookie) == 401


def test_a_forged_session_cookie_is_refused(api: Api) -> None:
    cookie = _log_in(api, api.token("readonly"))
    forged = cookie[: cookie.index(".") + 1] + "B" * 43
    assert _as_cookie(api, forged) == 401
    assert _as_cookie(api, api.admin_token) == 401  # the raw token is no session


def test_changing_the_environments_admin_token_ends_its_sessions(db: Database, settings: Settings) -> None:
    with TestClient(create_app(settings, database=db)) as client:
        login = client.post("/api/v1/session", json={"token": settings.admin_token})
        cookie = str(login.cookies[SESSION_COOKIE])
        _only(client, cookie)
        assert client.get("/api/v1/tokens").status_code == 200
    rotated = settings.model_copy(update={"admin_token": "rotated-admin-token-" + "0123456789abcdef"})
    with TestClient(create_app(rotated, database=db)) as client:
        _only(client, cookie)
        assert client.get("/api/v1/tokens").status_code == 401


def test_a_planted_csrf_cookie_and_its_echo_are_not_the_sessions(api: Api) -> None:
    """Who can plant a cookie (a sibling subdomain, plain HTTP) chooses both halves of a plain double
    submit; the CSRF value is the session's own, so an echo of a planted one is refused."""
    cookie = _log_in(api, api.admin_token)
    real = str(api.client.cookies[CSRF_COOKIE])

    def change(csrf_cookie: str, header: str) -> int:
        _only(api.client, cookie)
        api.client.cookies.set(CSRF_COOKIE, csrf_cookie)
        made = api.client.post("/api/v1/tokens", json={"kind": "readonly"}, headers={CSRF_HEADER: header})
        return int(made.status_code)

    assert change("chosen", "chosen") == 403
    assert change(real, real) == 201
    api.client.cookies.clear()
    other = _log_in(api, api.admin_token)  # another session's value does not fit this one
    other_csrf = str(api.client.cookies[CSRF_COOKIE])
    assert other != cookie and change(other_csrf, other_csrf) == 403
