"""The machine's conditions during each fio process of a measured run.

Revision ID: 0013_conditions
Revises: 0012_runs_host_fs
Create Date: 2026-11-27

Runs measured at different times differ by what else the machine was doing; the run now samples it once
a second (probe/conditions.py) and keeps every second here, one row per fio process (on its first fio
output), so that what a layer did during a cell can be shown from them later. The per-run summary the
warnings and `compare` read is in the cell's `measurement.replicates[].conditions`, which needs no
migration.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_conditions"
down_revision = "0012_runs_host_fs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conditions",
        sa.Column("fio_output_id", sa.String(32), sa.ForeignKey("fio_outputs.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("group_id", sa.String(32)),
        sa.Column("seconds", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("conditions")
