"""a result's device count and scaling efficiency

A data-parallel measurement runs one config on several devices at once (``devices`` ranks) and
records how close it came to ``devices`` times one device (``scaling_efficiency``). Every row
stored before was of one device, so the count's server default is 1; the efficiency is NULL.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("devices", sa.Integer(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("scaling_efficiency", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("scaling_efficiency")
        batch_op.drop_column("devices")
