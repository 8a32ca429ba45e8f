"""Dependencies declared once: the database, the caller, and who may do what."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.config import Settings
from app.contracts import TokenKind
from app.db import tokens
from app.db.engine import Database
from app.db.tokens import Principal
from app.errors import AuthError, ForbiddenError

_bearer = HTTPBearer(auto_error=False, description="hwa_<kind>_<id>.<secret>")


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


DatabaseDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_principal(
    db: DatabaseDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    if credentials is None:
        raise AuthError("missing bearer token", hint="send the header 'Authorization: Bearer <token>'")
    with db.reading() as session:
        return tokens.authenticate(session, credentials.credentials, env_admin_token=settings.admin_token)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def _allow(*kinds: TokenKind, what: str) -> object:
    def check(principal: PrincipalDep) -> Principal:
        if principal.kind not in kinds:
            allowed = " or ".join(k.value for k in kinds)
            raise ForbiddenError(f"a {principal.kind.value} token may not {what}; this needs {allowed}")
        return principal

    return Depends(check)


Admin = Annotated[Principal, _allow(TokenKind.admin, what="administer the server")]
Reader = Annotated[Principal, _allow(TokenKind.admin, TokenKind.readonly, what="read lab data")]
MachineAgent = Annotated[Principal, _allow(TokenKind.machine, what="upload runs")]
Enroller = Annotated[Principal, _allow(TokenKind.enrollment, what="enrol a machine")]
