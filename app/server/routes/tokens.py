from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, status

from app.contracts import TokenCreate, TokenIssued, TokenKind, TokenRead
from app.db import tokens
from app.errors import ConflictError
from app.server.deps import Admin, DatabaseDep

router = APIRouter(prefix="/tokens", tags=["tokens"])


@router.post("", status_code=status.HTTP_201_CREATED)
def create_token(body: TokenCreate, _admin: Admin, db: DatabaseDep) -> TokenIssued:
    """Issue an enrollment token (for agents) or a read-only API key (for procurement tools)."""
    if body.max_uses is not None and body.kind is not TokenKind.enrollment:
        raise ConflictError("max_uses applies to enrollment tokens only")
    with db.writing() as session:
        row, secret = tokens.issue(
            session,
            kind=TokenKind(body.kind),
            note=body.note,
            expires_in=timedelta(hours=body.expires_in_hours) if body.expires_in_hours else None,
            max_uses=body.max_uses,
        )
        return TokenIssued(**tokens.to_read(row).model_dump(), token=secret)


@router.get("")
def list_tokens(_admin: Admin, db: DatabaseDep, kind: TokenKind | None = None) -> list[TokenRead]:
    with db.reading() as session:
        return [tokens.to_read(row) for row in tokens.list_tokens(session, kind=kind)]


@router.delete("/{token_id}")
def revoke_token(token_id: str, _admin: Admin, db: DatabaseDep) -> TokenRead:
    with db.writing() as session:
        return tokens.to_read(tokens.revoke(session, token_id))
