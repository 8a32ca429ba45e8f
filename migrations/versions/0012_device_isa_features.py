"""a CPU device's ISA features, as its probe listed them

The performance model bounds a lab CPU's catalog peaks by the instructions its probe found (a virtual
machine may hide its host's AMX or AVX-512: app/catalog/probed.py). The features are in each machine's
spec snapshots; the device row carries its latest ones, so that reading the fleet reads no snapshot.
Every CPU device stored before takes its machine's latest snapshot's features; GPUs have none (NULL).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30 07:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

snapshots = sa.table(
    "spec_snapshots",
    sa.column("id", sa.Integer()),
    sa.column("machine_id", sa.Uuid()),
    sa.column("spec", sa.JSON()),
    sa.column("created_at", sa.DateTime()),
)
devices = sa.table(
    "devices",
    sa.column("machine_id", sa.Uuid()),
    sa.column("kind", sa.String()),
    sa.column("isa_features", sa.Text()),
)


def upgrade() -> None:
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.add_column(sa.Column("isa_features", sa.Text(), nullable=True))
    bind = op.get_bind()
    latest: dict[object, list[str]] = {}
    # oldest first, so that each machine's latest snapshot is the one kept
    oldest_first = sa.select(snapshots.c.machine_id, snapshots.c.spec).order_by(snapshots.c.created_at, snapshots.c.id)
    rows = bind.execute(oldest_first)
    for machine_id, spec in rows:
        features = ((spec or {}).get("cpu") or {}).get("isa_features")
        if isinstance(features, list):
            latest[machine_id] = [str(f) for f in features]
    for machine_id, features in latest.items():
        bind.execute(
            devices.update()
            .where(devices.c.machine_id == machine_id, devices.c.kind == "cpu")
            .values(isa_features=" ".join(features))
        )


def downgrade() -> None:
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.drop_column("isa_features")
