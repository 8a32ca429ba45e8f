"""a language model's figures on a result: context, tokens/s, energy per token, KV cache

Prefill and decode results (and a language model's training) are measured at a context length and
counted in tokens as well as samples; the KV cache they hold is recorded beside the peak memory.
Every row stored before is of a workload without them: the columns are NULL.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("context_tokens", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("throughput_tokens_per_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("energy_per_token_j", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("kv_cache_mb", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("kv_cache_mb")
        batch_op.drop_column("energy_per_token_j")
        batch_op.drop_column("throughput_tokens_per_s")
        batch_op.drop_column("context_tokens")
