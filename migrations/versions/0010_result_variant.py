"""a result's model variant

A result may measure an optimised form of its workload (static int8, pruned, low-rank: a
``variant``); every row stored before measured the original model, which is NULL.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("variant", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("variant")
