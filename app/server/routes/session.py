"""The dashboard's login: an admin token or a read-only key, exchanged for a session.

The cookie holds a session id and secret (``hws_...``), never the long-lived token: the session's
row (hashed like tokens, expiring after SESSION_HOURS) is in the database, so any server worker
can check it; logging out deletes it, and revoking the token logged in with ends it. Changes made
with the cookie need the CSRF header (deps.check_csrf)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request, Response

from app.contracts import SessionInfo, SessionLogin, TokenKind
from app.db import tokens
from app.errors import AuthError, ForbiddenError
from app.server.deps import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    DatabaseDep,
    Reader,
    SettingsDep,
    authenticate_limited,
    csrf_for,
)

router = APIRouter(prefix="/session", tags=["session"])
SESSION_HOURS = 12
DASHBOARD_KINDS = (TokenKind.admin, TokenKind.readonly)


@router.post("")
def log_in(
    body: SessionLogin, request: Request, response: Response, db: DatabaseDep, settings: SettingsDep
) -> SessionInfo:
    """Check the token and open a session; machine and enrollment tokens cannot log in."""
    principal = authenticate_limited(request, db, settings, body.token, "login")
    if principal.kind not in DASHBOARD_KINDS:
        raise ForbiddenError(
            f"a {principal.kind.value} token cannot open the dashboard; use the admin token or a read-only key"
        )
    age = SESSION_HOURS * 3600
    with db.writing() as session:
        cookie = tokens.open_session(
            session, principal, lifetime=timedelta(seconds=age), env_admin_token=settings.admin_token
        )
    secure = request.url.scheme == "https"
    response.set_cookie(SESSION_COOKIE, cookie, max_age=age, httponly=True, samesite="strict", secure=secure)
    response.set_cookie(CSRF_COOKIE, csrf_for(cookie), max_age=age, samesite="strict", secure=secure)
    return SessionInfo(kind=principal.kind)


@router.get("")
def who_am_i(request: Request, db: DatabaseDep, settings: SettingsDep) -> SessionInfo:
    """Who the session cookie belongs to; kind null when there is no valid session (log in)."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return SessionInfo(kind=None)
    try:
        with db.reading() as session:
            principal = tokens.authenticate_session(session, cookie, env_admin_token=settings.admin_token)
    except AuthError:
        return SessionInfo(kind=None)
    return SessionInfo(kind=principal.kind if principal.kind in DASHBOARD_KINDS else None)


@router.delete("", status_code=204)
def log_out(_principal: Reader, request: Request, response: Response, db: DatabaseDep) -> None:
    """End the session: its row is deleted, so the cookie is worthless even if it was copied."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        with db.writing() as session:
            tokens.close_session(session, cookie)
    response.delete_cookie(SESSION_COOKIE)
    response.delete_cookie(CSRF_COOKIE)
