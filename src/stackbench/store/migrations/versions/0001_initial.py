"""Runs, fio outputs and cells.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("label", sa.String(200), index=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("target", sa.Text),
        sa.Column("plan_name", sa.String(100)),
        sa.Column("planned_cells", sa.Integer),
        sa.Column("facts", sa.JSON, nullable=False),
        sa.Column("warnings", sa.JSON, nullable=False),
        sa.Column("stackbench_version", sa.String(32), nullable=False),
    )
    op.create_table(
        "fio_outputs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("fio_version", sa.String(64)),
        sa.Column("command", sa.JSON),
        sa.Column("job_file", sa.Text),
        sa.Column("raw_text", sa.Text, nullable=False),
        sa.Column("exit_code", sa.Integer),
        sa.Column("source_name", sa.Text),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "cells",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("fio_output_id", sa.String(32), sa.ForeignKey("fio_outputs.id", ondelete="CASCADE")),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("pattern", sa.String(200), nullable=False),
        sa.Column("rw", sa.String(16), nullable=False),
        sa.Column("direction", sa.String(8), nullable=False),
        sa.Column("bs", sa.BigInteger, nullable=False),
        sa.Column("iodepth", sa.Integer, nullable=False),
        sa.Column("numjobs", sa.Integer, nullable=False),
        sa.Column("sync", sa.Boolean, nullable=False),
        sa.Column("direct", sa.Boolean, nullable=False),
        sa.Column("host", sa.String(255)),
        sa.Column("iops", sa.Float, nullable=False),
        sa.Column("bw_bytes", sa.Float, nullable=False),
        sa.Column("clat_mean_ns", sa.Float),
        sa.Column("clat_p50_ns", sa.Float),
        sa.Column("clat_p99_ns", sa.Float),
        sa.Column("clat_p999_ns", sa.Float),
        sa.Column("sync_lat_mean_ns", sa.Float),
        sa.Column("sync_lat_p99_ns", sa.Float),
        sa.Column("usr_cpu", sa.Float),
        sa.Column("sys_cpu", sa.Float),
        sa.Column("workload", sa.JSON, nullable=False),
        sa.Column("result", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("cells")
    op.drop_table("fio_outputs")
    op.drop_table("runs")
