"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 10:41:44.968673
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op



revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('catalog_entries',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('vendor', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('specs', sa.JSON(), nullable=False),
    sa.Column('overrides', sa.JSON(), nullable=False),
    sa.Column('source', sa.String(length=200), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_catalog_entries'))
    )
    op.create_table('machines',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('hostname', sa.String(length=200), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('labels', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('retired_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_machines')),
    sa.UniqueConstraint('fingerprint', name=op.f('uq_machines_fingerprint'))
    )
    op.create_table('devices',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('machine_id', sa.Uuid(), nullable=False),
    sa.Column('device_id', sa.String(length=16), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('uuid', sa.String(length=200), nullable=True),
    sa.Column('memory_total_mb', sa.Float(), nullable=True),
    sa.Column('catalog_id', sa.String(length=64), nullable=True),
    sa.ForeignKeyConstraint(['machine_id'], ['machines.id'], name=op.f('fk_devices_machine_id_machines'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_devices')),
    sa.UniqueConstraint('machine_id', 'device_id', name=op.f('uq_devices_machine_id'))
    )
    with op.batch_alter_table('devices', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_devices_catalog_id'), ['catalog_id'], unique=False)

    op.create_table('jobs',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('suite', sa.String(length=64), nullable=False),
    sa.Column('machine_id', sa.Uuid(), nullable=True),
    sa.Column('selector', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('max_attempts', sa.Integer(), nullable=False),
    sa.Column('configs_done', sa.Integer(), nullable=False),
    sa.Column('configs_total', sa.Integer(), nullable=True),
    sa.Column('claimed_by', sa.Uuid(), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('message', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['claimed_by'], ['machines.id'], name=op.f('fk_jobs_claimed_by_machines'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['machine_id'], ['machines.id'], name=op.f('fk_jobs_machine_id_machines'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs'))
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_status_created', ['status', 'created_at'], unique=False)

    op.create_table('spec_snapshots',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('machine_id', sa.Uuid(), nullable=False),
    sa.Column('spec_hash', sa.String(length=64), nullable=False),
    sa.Column('spec', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['machine_id'], ['machines.id'], name=op.f('fk_spec_snapshots_machine_id_machines'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_spec_snapshots')),
    sa.UniqueConstraint('machine_id', 'spec_hash', name=op.f('uq_spec_snapshots_machine_id'))
    )
    with op.batch_alter_table('spec_snapshots', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_spec_snapshots_machine_id'), ['machine_id'], unique=False)

    op.create_table('tokens',
    sa.Column('id', sa.String(length=16), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('secret_hash', sa.String(length=64), nullable=False),
    sa.Column('note', sa.String(length=200), nullable=False),
    sa.Column('machine_id', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('uses', sa.Integer(), nullable=False),
    sa.Column('max_uses', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['machine_id'], ['machines.id'], name=op.f('fk_tokens_machine_id_machines'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tokens'))
    )
    with op.batch_alter_table('tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tokens_kind'), ['kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_tokens_machine_id'), ['machine_id'], unique=False)

    op.create_table('runs',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('machine_id', sa.Uuid(), nullable=False),
    sa.Column('spec_snapshot_id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Uuid(), nullable=True),
    sa.Column('suite', sa.String(length=64), nullable=False),
    sa.Column('agent_version', sa.String(length=32), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('result_count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_runs_job_id_jobs'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['machine_id'], ['machines.id'], name=op.f('fk_runs_machine_id_machines'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['spec_snapshot_id'], ['spec_snapshots.id'], name=op.f('fk_runs_spec_snapshot_id_spec_snapshots')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_runs'))
    )
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_runs_job_id'), ['job_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_runs_machine_id'), ['machine_id'], unique=False)

    op.create_table('results',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('run_id', sa.Uuid(), nullable=False),
    sa.Column('machine_id', sa.Uuid(), nullable=False),
    sa.Column('workload', sa.String(length=64), nullable=False),
    sa.Column('runtime', sa.String(length=64), nullable=False),
    sa.Column('device', sa.String(length=16), nullable=False),
    sa.Column('device_kind', sa.String(length=8), nullable=False),
    sa.Column('precision', sa.String(length=8), nullable=False),
    sa.Column('batch_size', sa.Integer(), nullable=False),
    sa.Column('threads', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('throughput_samples_per_s', sa.Float(), nullable=True),
    sa.Column('latency_p50_ms', sa.Float(), nullable=True),
    sa.Column('latency_p90_ms', sa.Float(), nullable=True),
    sa.Column('latency_p99_ms', sa.Float(), nullable=True),
    sa.Column('latency_mean_ms', sa.Float(), nullable=True),
    sa.Column('latency_ci95_low_ms', sa.Float(), nullable=True),
    sa.Column('latency_ci95_high_ms', sa.Float(), nullable=True),
    sa.Column('cv', sa.Float(), nullable=True),
    sa.Column('iterations', sa.Integer(), nullable=True),
    sa.Column('stable', sa.Boolean(), nullable=True),
    sa.Column('peak_memory_mb', sa.Float(), nullable=True),
    sa.Column('mean_power_w', sa.Float(), nullable=True),
    sa.Column('energy_per_sample_j', sa.Float(), nullable=True),
    sa.Column('power_source', sa.String(length=16), nullable=False),
    sa.Column('achieved_tflops', sa.Float(), nullable=True),
    sa.Column('bandwidth_gb_per_s', sa.Float(), nullable=True),
    sa.Column('compile_time_s', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['machine_id'], ['machines.id'], name=op.f('fk_results_machine_id_machines'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_results_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_results'))
    )
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.create_index('ix_results_config', ['workload', 'runtime', 'precision', 'batch_size'], unique=False)
        batch_op.create_index(batch_op.f('ix_results_device_kind'), ['device_kind'], unique=False)
        batch_op.create_index('ix_results_machine_workload', ['machine_id', 'workload'], unique=False)
        batch_op.create_index(batch_op.f('ix_results_run_id'), ['run_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_results_run_id'))
        batch_op.drop_index('ix_results_machine_workload')
        batch_op.drop_index(batch_op.f('ix_results_device_kind'))
        batch_op.drop_index('ix_results_config')

    op.drop_table('results')
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_runs_machine_id'))
        batch_op.drop_index(batch_op.f('ix_runs_job_id'))

    op.drop_table('runs')
    with op.batch_alter_table('tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tokens_machine_id'))
        batch_op.drop_index(batch_op.f('ix_tokens_kind'))

    op.drop_table('tokens')
    with op.batch_alter_table('spec_snapshots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_spec_snapshots_machine_id'))

    op.drop_table('spec_snapshots')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_status_created')

    op.drop_table('jobs')
    with op.batch_alter_table('devices', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_devices_catalog_id'))

    op.drop_table('devices')
    op.drop_table('machines')
    op.drop_table('catalog_entries')
