"""declared clusters, and a result's nodes and cluster

A lab declares machines that form one cluster and the network between them (``clusters``,
``cluster_members``): plans across several machines use that network, and a data-parallel run over
several machines (``nodes`` > 1) records the declared cluster it crossed (``cluster``), so its scaling
efficiency calibrates that network. Every row stored before ran on one machine: ``nodes`` defaults to
1 and ``cluster`` is NULL. The index on ``devices`` finds the data-parallel rows, which the
recommender's fingerprint reads on every ask.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 13:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "clusters",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("network_gb_s", sa.Float(), nullable=False),
        sa.Column("interconnect", sa.String(length=200), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_clusters")),
    )
    op.create_table(
        "cluster_members",
        sa.Column("cluster", sa.String(length=64), nullable=False),
        sa.Column("machine_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster"], ["clusters.name"], name=op.f("fk_cluster_members_cluster_clusters"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name=op.f("fk_cluster_members_machine_id_machines"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("cluster", "machine_id", name=op.f("pk_cluster_members")),
    )
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("nodes", sa.Integer(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("cluster", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_results_devices", ["devices"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_index("ix_results_devices")
        batch_op.drop_column("cluster")
        batch_op.drop_column("nodes")
    op.drop_table("cluster_members")
    op.drop_table("clusters")
