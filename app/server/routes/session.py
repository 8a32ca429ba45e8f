"""The dashboard's login: an admin token or a read-only key, kept in an HttpOnly cookie.

The cookie holds the token itself (hashed in the database like every token), so any server worker
can check it with no session state in memory; revoking the key ends the session. Changes made with
the cookie need the CSRF header (deps.check_csrf)."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request, Response

from app.contracts import SessionInfo, SessionLogin, TokenKind
from app.db import tokens
from app.errors import AuthError, ForbiddenError
from app.server.deps import CSRF_COOKIE, SESSION_COOKIE, DatabaseDep, Reader, SettingsDep, authenticate_limited

router = APIRouter(prefix="/session", tags=["session"])
SESSION_HOURS = 12
DASHBOARD_KINDS = (TokenKind.admin, TokenKind.readonly)


@router.post("")
def log_in(
    body: SessionLogin, request: Request, response: Response, db: DatabaseDep, settings: SettingsDep
) -> SessionInfo:
    """Check the token and keep it in the session cookie; machine and enrollment tokens cannot log in."""
    principal = authenticate_limited(request, db, settings, body.token, "login")
    if principal.kind not in DASHBOARD_KINDS:
        raise ForbiddenError(
            f"a {principal.kind.value} token cannot open the dashboard; use the admin token or a read-only key"
        )
    secure = request.url.scheme == "https"
    age = SESSION_HOURS * 3600
    response.set_cookie(SESSION_COOKIE, body.token, max_age=age, httponly=True, samesite="strict", secure=secure)
    response.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(24), max_age=age, samesite="strict", secure=secure)
    return SessionInfo(kind=principal.kind)


@router.get("")
def who_am_i(request: Request, db: DatabaseDep, settings: SettingsDep) -> SessionInfo:
    """Who the session cookie belongs to; kind null when there is no valid session (log in)."""
    secret = request.cookies.get(SESSION_COOKIE)
    if not secret:
        return SessionInfo(kind=None)
    try:
        with db.reading() as session:
            principal = tokens.authenticate(session, secret, env_admin_token=settings.admin_token)
    except AuthError:
        return SessionInfo(kind=None)
    return SessionInfo(kind=principal.kind if principal.kind in DASHBOARD_KINDS else None)


@router.delete("", status_code=204)
def log_out(_principal: Reader, response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE)
    response.delete_cookie(CSRF_COOKIE)
