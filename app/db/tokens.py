"""Bearer tokens: issue, authenticate, revoke.

A token reads ``hwa_<kind>_<id>.<secret>``. The id is public and selects the row; only the
SHA-256 of the secret is stored, and it is compared in constant time. The secrets are 256-bit
random, so a plain hash (no slow KDF) is the right tool: there is nothing to brute-force.

A dashboard session is kept the same way (``hws_<id>.<secret>``): the cookie never holds the
long-lived token, logging out deletes the row, and the session ends with the token it stands for.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.contracts import TokenKind, TokenRead
from app.db.models import SessionRow, TokenRow, utcnow
from app.errors import AuthError, NotFoundError

TOKEN_PATTERN = re.compile(r"^hwa_(?P<kind>[a-z]+)_(?P<id>[0-9a-f]{12})\.(?P<secret>[A-Za-z0-9_\-]{32,64})$")
SESSION_PATTERN = re.compile(r"^hws_(?P<id>[0-9a-f]{12})\.(?P<secret>[A-Za-z0-9_\-]{32,64})$")
ENV_ADMIN_ID = "env-admin"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the kind of token, its id, and for a machine token, the machine."""

    kind: TokenKind
    token_id: str
    machine_id: uuid.UUID | None = None
    awaiting_approval: bool = False
    """A machine token from an unproven re-enrolment: it may only heartbeat until an admin approves it."""


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


NOTE_MAX = 200
"""The note column's length (``TokenRow.note``)."""


def issue(
    session: Session,
    *,
    kind: TokenKind,
    note: str = "",
    expires_in: timedelta | None = None,
    max_uses: int | None = None,
    machine_id: uuid.UUID | None = None,
    awaiting_approval: bool = False,
) -> tuple[TokenRow, str]:
    """Store a new token and return it with its secret, which is never stored or shown again. A note
    the server composes (a hostname in it) is cut to what the column holds."""
    if len(note) > NOTE_MAX:
        note = note[: NOTE_MAX - 1] + "…"
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
        awaiting_approval=awaiting_approval,
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
    _check_live(row, "token")
    return _principal(row)


def _check_live(row: TokenRow, what: str) -> None:
    if row.revoked_at is not None:
        raise AuthError(f"{what} revoked", hint="ask an admin for a new one")
    if row.expires_at is not None and row.expires_at <= utcnow():
        raise AuthError(f"{what} expired", hint="ask an admin for a new one")


def _principal(row: TokenRow) -> Principal:
    return Principal(
        kind=TokenKind(row.kind), token_id=row.id, machine_id=row.machine_id, awaiting_approval=row.awaiting_approval
    )


def _env_admin_digest(env_admin_token: str) -> str:
    """Enough of the token's hash to notice that it changed, too little to test guesses against."""
    return _hash("session:" + env_admin_token)[:16]


def open_session(
    session: Session, principal: Principal, *, lifetime: timedelta, env_admin_token: str | None = None
) -> str:
    """A dashboard session for the principal; returns the cookie's value (shown to no one else).
    Sessions past their expiry are deleted on the way."""
    now = utcnow()
    session.execute(delete(SessionRow).where(SessionRow.expires_at <= now))
    from_env = principal.token_id == ENV_ADMIN_ID
    if from_env and not env_admin_token:
        raise AuthError("the environment's admin token is not set")
    session_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    session.add(
        SessionRow(
            id=session_id,
            secret_hash=_hash(secret),
            kind=principal.kind.value,
            token_id=None if from_env else principal.token_id,
            env_admin_digest=_env_admin_digest(env_admin_token) if from_env and env_admin_token else None,
            created_at=now,
            expires_at=now + lifetime,
        )
    )
    session.flush()
    return f"hws_{session_id}.{secret}"


def _session_row(session: Session, presented: str) -> SessionRow | None:
    match = SESSION_PATTERN.match(presented)
    if match is None:
        return None
    row = session.get(SessionRow, match["id"])
    expected = row.secret_hash if row is not None else _hash("")
    if not hmac.compare_digest(expected, _hash(match["secret"])) or row is None:
        return None
    return row


def authenticate_session(session: Session, presented: str, *, env_admin_token: str | None = None) -> Principal:
    """The principal a session cookie stands for, checked against the token it was opened with."""
    row = _session_row(session, presented)
    if row is None:
        raise AuthError("no such session", hint="log in again")
    if row.expires_at <= utcnow():
        raise AuthError("session expired", hint="log in again")
    if row.token_id is None:
        if not env_admin_token or row.env_admin_digest != _env_admin_digest(env_admin_token):
            raise AuthError("session ended: the admin token changed", hint="log in again")
        return Principal(kind=TokenKind.admin, token_id=ENV_ADMIN_ID)
    token = session.get(TokenRow, row.token_id)
    if token is None:
        raise AuthError("session ended: its token is gone", hint="log in again")
    _check_live(token, "session's token")
    return _principal(token)


def close_session(session: Session, presented: str) -> bool:
    """Delete the session the cookie names; whether there was one."""
    row = _session_row(session, presented)
    if row is None:
        return False
    session.delete(row)
    return True


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


def revoke_machine_tokens(session: Session, machine_id: uuid.UUID, *, awaiting_only: bool = False) -> None:
    query = update(TokenRow).where(TokenRow.machine_id == machine_id, TokenRow.revoked_at.is_(None))
    if awaiting_only:
        query = query.where(TokenRow.awaiting_approval.is_(True))
    session.execute(query.values(revoked_at=utcnow()))


def approve_awaiting(session: Session, machine_id: uuid.UUID) -> bool:
    """Let the machine's token awaiting approval work, revoking the machine's other tokens; whether
    there was one (the newest, if several)."""
    awaiting = session.scalars(
        select(TokenRow)
        .where(
            TokenRow.machine_id == machine_id,
            TokenRow.awaiting_approval.is_(True),
            TokenRow.revoked_at.is_(None),
        )
        .order_by(TokenRow.created_at.desc())
        .limit(1)
    ).first()
    if awaiting is None:
        return False
    session.execute(
        update(TokenRow)
        .where(TokenRow.machine_id == machine_id, TokenRow.id != awaiting.id, TokenRow.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    awaiting.awaiting_approval = False
    return True


def _has_live(session: Session, machine_id: uuid.UUID, *, awaiting: bool) -> bool:
    query = select(TokenRow.id).where(
        TokenRow.machine_id == machine_id, TokenRow.awaiting_approval.is_(awaiting), TokenRow.revoked_at.is_(None)
    )
    return session.scalars(query.limit(1)).first() is not None


def has_awaiting(session: Session, machine_id: uuid.UUID) -> bool:
    """Whether the machine has a token not revoked that awaits an admin's approval (a re-enrolment)."""
    return _has_live(session, machine_id, awaiting=True)


def has_working(session: Session, machine_id: uuid.UUID) -> bool:
    """Whether the machine has a token that is not revoked and not awaiting approval: an agent that
    enrolled it first."""
    return _has_live(session, machine_id, awaiting=False)


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
