"""`hwadvisor token ...`: enrollment tokens, read-only API keys, the admin token."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from app.cli.common import database_url
from app.contracts import TokenKind
from app.errors import HwadvisorError

group = typer.Typer(no_args_is_help=True, help="Enrollment tokens, read-only API keys, the admin token.")


@group.command("create")
def create(
    kind: Annotated[str, typer.Argument(help="enrollment or readonly")],
    note: str = "",
    max_uses: Annotated[int | None, typer.Option(min=1, help="Enrollment tokens: uses allowed.")] = None,
    expires_in_hours: Annotated[float | None, typer.Option(min=0.01)] = None,
) -> None:
    """Issue a token and print its secret once."""
    from app.db import tokens
    from app.db.engine import Database

    if kind not in (TokenKind.enrollment.value, TokenKind.readonly.value):
        raise HwadvisorError(f"cannot create a {kind!r} token", hint="choose enrollment or readonly")
    db = Database(database_url())
    with db.writing() as session:
        _row, secret = tokens.issue(
            session,
            kind=TokenKind(kind),
            note=note,
            max_uses=max_uses,
            expires_in=timedelta(hours=expires_in_hours) if expires_in_hours else None,
        )
    typer.echo(secret)


@group.command("list")
def list_() -> None:
    """List tokens (never their secrets)."""
    from app.db import tokens
    from app.db.engine import Database

    with Database(database_url()).reading() as session:
        for row in tokens.list_tokens(session):
            state = "revoked" if row.revoked_at else "active"
            typer.echo(f"{row.id}  {row.kind:<10} {state:<8} uses={row.uses}  {row.note}")


@group.command("revoke")
def revoke(token_id: str) -> None:
    """Revoke a token by its id."""
    from app.db import tokens
    from app.db.engine import Database

    with Database(database_url()).writing() as session:
        tokens.revoke(session, token_id)
    typer.echo(f"revoked {token_id}")


@group.command("rotate-admin")
def rotate_admin() -> None:
    """Revoke every stored admin token and print a new one."""
    from app.db import tokens
    from app.db.engine import Database

    with Database(database_url()).writing() as session:
        for row in tokens.list_tokens(session, kind=TokenKind.admin):
            tokens.revoke(session, row.id)
        _row, secret = tokens.issue(session, kind=TokenKind.admin, note="rotated")
    typer.echo(secret)
