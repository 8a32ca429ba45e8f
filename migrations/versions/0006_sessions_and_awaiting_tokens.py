"""dashboard sessions; machine tokens awaiting approval

The dashboard's cookie held the long-lived token itself; it now holds a session id whose row
(hashed like tokens, expiring) logout deletes. A re-enrolment that cannot prove it is the
machine's agent gets a token that awaits an admin's approval instead of taking the machine over.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("awaiting_approval", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("token_id", sa.String(length=16), nullable=True),
        sa.Column("env_admin_digest", sa.String(length=16), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["token_id"], ["tokens.id"], name=op.f("fk_sessions_token_id_tokens"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
    )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sessions_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_sessions_token_id"), ["token_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_token_id"))
        batch_op.drop_index(batch_op.f("ix_sessions_expires_at"))
    op.drop_table("sessions")
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_column("awaiting_approval")
