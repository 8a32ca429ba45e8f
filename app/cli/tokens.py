"""`hwadvisor token ...`: enrollment tokens, read-only API keys, the admin token."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.common import database
from app.contracts import TokenKind
from app.errors import HwadvisorError

if TYPE_CHECKING:
    from app.db.models import TokenRow

group = typer.Typer(no_args_is_help=True, help="Enrollment tokens, read-only API keys, the admin token.")


ENROLLMENT_MAX_USES = 10
ENROLLMENT_EXPIRES_IN_HOURS = 24.0
"""An enrollment token is a key to the lab: by default it enrols a rack's worth of machines in a day."""


@group.command("create")
def create(
    kind: Annotated[str, typer.Argument(help="enrollment or readonly")],
    note: str = "",
    max_uses: Annotated[
        int | None,
        typer.Option(min=1, help=f"Enrollment tokens: uses allowed (default {ENROLLMENT_MAX_USES})."),
    ] = None,
    expires_in_hours: Annotated[
        float | None,
        typer.Option(
            min=0.01,
            help=f"Hours until it expires (enrollment default {ENROLLMENT_EXPIRES_IN_HOURS:g}; readonly never).",
        ),
    ] = None,
    unlimited: Annotated[
        bool, typer.Option("--unlimited", help="Enrollment tokens: no use limit and no expiry unless given.")
    ] = False,
) -> None:
    """Issue a token and print its secret once (on stdout; its limits go to stderr)."""
    from app.db import tokens

    if kind not in (TokenKind.enrollment.value, TokenKind.readonly.value):
        raise HwadvisorError(f"cannot create a {kind!r} token", hint="choose enrollment or readonly")
    if kind == TokenKind.readonly.value and (max_uses is not None or unlimited):
        raise HwadvisorError("--max-uses and --unlimited apply to enrollment tokens only")
    if kind == TokenKind.enrollment.value and not unlimited:
        max_uses = max_uses or ENROLLMENT_MAX_USES
        expires_in_hours = expires_in_hours or ENROLLMENT_EXPIRES_IN_HOURS
    db = database()
    with db.writing() as session:
        row, secret = tokens.issue(
            session,
            kind=TokenKind(kind),
            note=note,
            max_uses=max_uses,
            expires_in=timedelta(hours=expires_in_hours) if expires_in_hours else None,
        )
        uses = "unlimited uses" if row.max_uses is None else f"{row.max_uses} use{'s' if row.max_uses != 1 else ''}"
        expiry = f"expires {row.expires_at.isoformat(timespec='minutes')}" if row.expires_at else "never expires"
    typer.echo(secret)
    limits = f"{uses}, {expiry}" if kind == TokenKind.enrollment.value else expiry
    typer.echo(f"{kind} token {row.id}: {limits}", err=True)


@group.command("list")
def list_() -> None:
    """List tokens (never their secrets)."""
    from app.db import tokens

    with database().reading() as session:
        for row in tokens.list_tokens(session):
            typer.echo(f"{row.id}  {row.kind:<10} {_state(row):<8} {_uses(row):<10} {row.note}".rstrip())


@group.command("revoke")
def revoke(token_id: str) -> None:
    """Revoke a token by its id."""
    from app.db import tokens

    with database().writing() as session:
        tokens.revoke(session, token_id)
    typer.echo(f"revoked {token_id}")


@group.command("rotate-admin")
def rotate_admin() -> None:
    """Revoke every stored admin token and print a new one."""
    from app.db import tokens

    with database().writing() as session:
        for row in tokens.list_tokens(session, kind=TokenKind.admin):
            tokens.revoke(session, row.id)
        _row, secret = tokens.issue(session, kind=TokenKind.admin, note="rotated")
    typer.echo(secret)


def _state(row: TokenRow) -> str:
    """Whether the token still works, and if not, why (the order authentication checks them in)."""
    from app.db.models import utcnow

    if row.revoked_at is not None:
        return "revoked"
    if row.awaiting_approval:
        return "awaiting"
    if row.expires_at is not None and row.expires_at <= utcnow():
        return "expired"
    if row.max_uses is not None and row.uses >= row.max_uses:
        return "used up"
    return "active"


def _uses(row: TokenRow) -> str:
    """Uses are counted for enrollment tokens only (each enrols a machine); elsewhere a count would read 0."""
    if row.kind != TokenKind.enrollment.value:
        return ""
    return f"uses={row.uses}" if row.max_uses is None else f"uses={row.uses}/{row.max_uses}"
