"""public results

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 13:35:42.445092
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "public_results",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=80), nullable=False),
        sa.Column("hardware_id", sa.String(length=64), nullable=False),
        sa.Column("hardware_name", sa.String(length=200), nullable=False),
        sa.Column("workload", sa.String(length=64), nullable=False),
        sa.Column("unit", sa.String(length=32), nullable=False),
        sa.Column("runtime", sa.String(length=64), nullable=False),
        sa.Column("precision", sa.String(length=8), nullable=False),
        sa.Column("batch_size", sa.Integer(), nullable=False),
        sa.Column("devices", sa.Integer(), nullable=False),
        sa.Column("throughput_samples_per_s", sa.Float(), nullable=False),
        sa.Column("latency_p99_ms", sa.Float(), nullable=True),
        sa.Column("mean_power_w", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_public_results")),
    )
    with op.batch_alter_table("public_results", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_public_results_source"), ["source"], unique=False)
        batch_op.create_index("ix_public_results_workload", ["workload"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("public_results", schema=None) as batch_op:
        batch_op.drop_index("ix_public_results_workload")
        batch_op.drop_index(batch_op.f("ix_public_results_source"))

    op.drop_table("public_results")
