"""job suite text and agent state

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 11:35:46.373002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("suite_toml", sa.Text(), nullable=True))

    with op.batch_alter_table("machines", schema=None) as batch_op:
        batch_op.add_column(sa.Column("agent_state", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("machines", schema=None) as batch_op:
        batch_op.drop_column("agent_state")

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("suite_toml")
