"""Per-second samples of every cell, and cells measured in several fio runs (segments).

Revision ID: 0002_samples
Revises: 0001_initial
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_samples"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "samples",
        sa.Column("cell_id", sa.String(32), sa.ForeignKey("cells.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("idx", sa.Integer, primary_key=True),
        sa.Column("segment", sa.Integer, nullable=False),
        sa.Column("t_s", sa.Float, nullable=False),
        sa.Column("iops", sa.Float, nullable=False),
        sa.Column("bw_bytes", sa.Float),
        sa.Column("clat_mean_ns", sa.Float),
        sa.Column("ramp", sa.Boolean, nullable=False),
    )
    with op.batch_alter_table("cells") as batch:
        batch.add_column(sa.Column("measurement", sa.JSON))
    with op.batch_alter_table("fio_outputs") as batch:
        batch.add_column(sa.Column("segment", sa.Integer))
        batch.add_column(sa.Column("group_id", sa.String(32)))


def downgrade() -> None:
    with op.batch_alter_table("fio_outputs") as batch:
        batch.drop_column("group_id")
        batch.drop_column("segment")
    with op.batch_alter_table("cells") as batch:
        batch.drop_column("measurement")
    op.drop_table("samples")
