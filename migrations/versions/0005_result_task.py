"""task is a field of a result

A result's workload was stored as 'resnet50/infer' (primitives, which have no task, as
'gemm_2048'). The task moves to its own column, backfilled by splitting the stored name, and the
name keeps only the workload; published results likewise. The downgrade joins them back.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TABLES = ("results", "public_results")
TASKS = ("infer", "train")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("task", sa.String(length=8), nullable=True))
        for task in TASKS:
            # substr and length mean the same on SQLite and PostgreSQL
            op.execute(
                sa.text(
                    f"UPDATE {table} SET task = :task, workload = substr(workload, 1, length(workload) - :cut) "
                    "WHERE workload LIKE :suffix"
                ).bindparams(task=task, cut=len(task) + 1, suffix=f"%/{task}")
            )


def downgrade() -> None:
    for table in TABLES:
        op.execute(sa.text(f"UPDATE {table} SET workload = workload || '/' || task WHERE task IS NOT NULL"))
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("task")
