"""catalog pins: an admin's catalog entry for a machine's device

A CPU under a hypervisor reports a generic name ('AMD EPYC') that matches no catalog entry, and
never will: an admin says which part it is. The choice is a row of its own, not a column of the
device rows, which every new spec rewrites; it wins over the automatic match until cleared.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "catalog_pins",
        sa.Column("machine_id", sa.Uuid(), nullable=False),
        sa.Column("device", sa.String(length=16), nullable=False),
        sa.Column("catalog_id", sa.String(length=64), nullable=False),
        sa.Column("pinned_by", sa.String(length=200), nullable=False),
        sa.Column("pinned_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name=op.f("fk_catalog_pins_machine_id_machines"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("machine_id", "device", name=op.f("pk_catalog_pins")),
    )


def downgrade() -> None:
    op.drop_table("catalog_pins")
