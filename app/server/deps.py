"""Dependencies declared once: the database, the caller, and who may do what."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.config import Settings
from app.contracts import TokenKind
from app.db import ratelimit, tokens
from app.db.engine import Database
from app.db.tokens import Principal
from app.errors import AuthError, ForbiddenError, RateLimited
from app.server.errors import missing_token
from app.server.gate import heavy_turn

_bearer = HTTPBearer(auto_error=False, description="hwa_<kind>_<id>.<secret>")


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


DatabaseDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
HeavyTurn = Annotated[None, Depends(heavy_turn)]
"""A heavy route's turn at the gate (app/server/gate.py); declare it after the caller's principal, so
that only an authenticated caller waits for one."""


SESSION_COOKIE = "hwa_session"
CSRF_COOKIE = "hwa_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def csrf_for(session_cookie: str) -> str:
    """The CSRF value of a session: derived from its cookie, which no script can read (HttpOnly)."""
    return hmac.new(session_cookie.encode(), b"hwadvisor csrf", hashlib.sha256).hexdigest()[:32]


def check_csrf(request: Request, session_cookie: str) -> None:
    """A cookie-authenticated change must send its session's CSRF value (``csrf_for``, which the login
    also sets in a cookie the dashboard's script reads) in a header: another site's page can make the
    browser send the cookies, but cannot read them to set the header. The value is the session's, not
    any cookie's echo: one who can plant a cookie (a sibling subdomain, plain HTTP) could otherwise
    choose both halves of a double submit."""
    header = request.headers.get(CSRF_HEADER, "")
    if not header or not hmac.compare_digest(header, csrf_for(session_cookie)):
        raise ForbiddenError(
            "CSRF check failed", hint=f"send the {CSRF_COOKIE} cookie's value in the {CSRF_HEADER} header"
        )


def get_principal(
    request: Request,
    db: DatabaseDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller, from the bearer header (tools, agents) or the dashboard's session cookie.

    Bearer tokens are rate-limited like logins: a client that keeps presenting wrong tokens gets 429."""
    if credentials is not None:
        return authenticate_limited(request, db, settings, credentials.credentials, "bearer token")
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie is None:
        raise missing_token()
    if request.method not in SAFE_METHODS:
        check_csrf(request, cookie)
    with db.reading() as session:
        return tokens.authenticate_session(session, cookie, env_admin_token=settings.admin_token)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def client_host(request: Request) -> str:
    """The caller's address (behind a reverse proxy, set HWADVISOR_PROXY_HEADERS=1, app/config.py)."""
    return request.client.host if request.client else "unknown"


def authenticate_limited(request: Request, db: Database, settings: Settings, secret: str, scope: str) -> Principal:
    """authenticate(); a failure is counted (in the database, so all workers share the allowance) and,
    once a client has failed too often in the current window, refused with 429 until it ends. A valid
    token is always let in: the limit slows guessing (hopeless against 256-bit secrets anyway), and
    checking it first would let anyone behind the same address (a NAT, a proxy) lock out every agent
    and tool there with a few bad requests."""
    key = f"{scope}:{client_host(request)}"
    try:
        with db.reading() as session:
            return tokens.authenticate(session, secret, env_admin_token=settings.admin_token)
    except AuthError:
        with db.writing() as session:
            count, retry_after = ratelimit.failures(session, key, window_s=settings.auth_window_s)
            if count >= settings.auth_failures_per_window:
                raise RateLimited(
                    f"too many failed {scope} attempts from {client_host(request)}",
                    retry_after_s=retry_after,
                    hint=f"try again in {retry_after} s, with a valid token",
                ) from None
            ratelimit.record_failure(session, key, window_s=settings.auth_window_s)
        raise


def get_enrolling_principal(
    request: Request,
    db: DatabaseDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller of the enrolment, from the bearer header, with failures rate-limited."""
    if credentials is None:
        raise missing_token()
    return authenticate_limited(request, db, settings, credentials.credentials, "enrollment")


def _allow(
    *kinds: TokenKind, what: str, caller: Callable[..., Principal] = get_principal, awaiting_ok: bool = False
) -> object:
    def check(principal: Principal = Depends(caller)) -> Principal:
        if principal.kind not in kinds:
            allowed = " or ".join(k.value for k in kinds)
            raise ForbiddenError(f"a {principal.kind.value} token may not {what}; this needs {allowed}")
        if principal.awaiting_approval and not awaiting_ok:
            raise ForbiddenError(
                f"machine {principal.machine_id} was re-enrolled without its current token; this token is pending"
                " approval",
                hint=f"an admin approves it with `hwadvisor machines approve {principal.machine_id}`",
            )
        return principal

    return Depends(check)


Admin = Annotated[Principal, _allow(TokenKind.admin, what="administer the server")]
Reader = Annotated[Principal, _allow(TokenKind.admin, TokenKind.readonly, what="read lab data")]
MachineAgent = Annotated[Principal, _allow(TokenKind.machine, what="upload runs")]
MachineBeat = Annotated[Principal, _allow(TokenKind.machine, what="heartbeat", awaiting_ok=True)]
"""A machine token, one awaiting approval included (it is told it is pending)."""
Enroller = Annotated[Principal, _allow(TokenKind.enrollment, what="enrol a machine", caller=get_enrolling_principal)]
