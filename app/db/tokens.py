"""Bearer tokens: issue, authenticate, revoke.

A token reads ``hwa_<kind>_<id>.<secret>``. The id is public and selects the row; only the
SHA-256 of the secret is stored, and it is compared in constant time. The secrets are 256-bit
random, so a plain hash (no slow KDF) is the right tool: there is nothing to brute-force.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.contracts import TokenKind, TokenRead
from app.db.models import TokenRow, utcnow
from app.errors import AuthError, NotFoundError

TOKEN_PATTERN = re.compile(r"^hwa_(?P<kind>[a-z]+)_(?P<id>[0-9a-f]{12})\.(?P<secret>[A-Za-z0-9_\-]{32,64})$")
ENV_ADMIN_ID = "env-admin"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the kind of token, its id, and for a machine token, the machine."""

    kind: TokenKind
    token_id: str
    machine_id: uuid.UUID | None = None


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def issue(
    session: Session,
    *,
    kind: TokenKind,
    note: str = "",
    expires_in: timedelta | None = None,
    max_uses: int | None = None,
    machine_id: uuid.UUID | None = None,
) -> tuple[TokenRow, str]:
    """Store a new token and return it with its secret, which is never stored or shown again."""
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    row = TokenRow(
        id=token_id,
        kind=kind.value,
        secret_hash=_hash(secret),
        note=note,
        machine_id=machine_id,
        expires_at=utcnow() + expires_in if expires_in else None,
        max_uses=max_uses,
        uses=0,
    )
    session.add(row)
    session.flush()
    return row, f"hwa_{kind.value}_{token_id}.{secret}"


def authenticate(session: Session, presented: str, *, env_admin_token: str | None = None) -> Principal:
    """The principal a bearer token stands for, or AuthError saying what is wrong with it."""
    if env_admin_token and hmac.compare_digest(_hash(presented), _hash(env_admin_token)):
        return Principal(kind=TokenKind.admin, token_id=ENV_ADMIN_ID)
    match = TOKEN_PATTERN.match(presented)
    if match is None:
        raise AuthError("malformed token", hint="tokens look like hwa_<kind>_<id>.<secret>")
    row = session.get(TokenRow, match["id"])
    # Hash even when the row is missing so that timing does not tell which ids exist.
    expected = row.secret_hash if row is not None else _hash("")
    if not hmac.compare_digest(expected, _hash(match["secret"])) or row is None or row.kind != match["kind"]:
        raise AuthError("unknown token", hint="check that the token was copied whole, or ask for a new one")
    if row.revoked_at is not None:
        raise AuthError("token revoked", hint="ask an admin for a new one")
    if row.expires_at is not None and row.expires_at <= utcnow():
        raise AuthError("token expired", hint="ask an admin for a new one")
    return Principal(kind=TokenKind(row.kind), token_id=row.id, machine_id=row.machine_id)


def consume_use(session: Session, token_id: str) -> None:
    """Count one use of a limited token, atomically; AuthError when none are left."""
    now = utcnow()
    claimed = session.execute(
        update(TokenRow)
        .where(TokenRow.id == token_id)
        .where((TokenRow.max_uses.is_(None)) | (TokenRow.uses < TokenRow.max_uses))
        .values(uses=TokenRow.uses + 1, last_used_at=now)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        raise AuthError("enrollment token used up", hint="ask an admin for a new enrollment token")


def revoke(session: Session, token_id: str) -> TokenRow:
    row = session.get(TokenRow, token_id)
    if row is None:
        raise NotFoundError(f"no token with id {token_id!r}")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    return row


def revoke_machine_tokens(session: Session, machine_id: uuid.UUID) -> None:
    session.execute(
        update(TokenRow)
        .where(TokenRow.machine_id == machine_id, TokenRow.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )


def list_tokens(session: Session, *, kind: TokenKind | None = None) -> list[TokenRow]:
    query = select(TokenRow).order_by(TokenRow.created_at)
    if kind is not None:
        query = query.where(TokenRow.kind == kind.value)
    return list(session.scalars(query))


def has_admin_token(session: Session) -> bool:
    query = select(TokenRow.id).where(TokenRow.kind == TokenKind.admin.value, TokenRow.revoked_at.is_(None))
    return session.scalars(query.limit(1)).first() is not None


def to_read(row: TokenRow) -> TokenRead:
    return TokenRead.model_validate(row, from_attributes=True)
