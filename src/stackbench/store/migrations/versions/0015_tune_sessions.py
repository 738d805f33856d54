"""Stored tune sessions.

Revision ID: 0015_tune_sessions
Revises: 0014_runs_device_model
Create Date: 2026-11-27

`stackbench tune --apply` printed its report once, at the end; the journal keeps what to undo and the arm
runs what was measured, but not the session as a whole. A session is now stored when it ends (completed,
interrupted or failed once it had started measuring), one row with its JSON document, so that `show` prints
its report again and `runs` lists it. Owner and visibility as on runs, scans and audits (0005).
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_tune_sessions"
down_revision = "0014_runs_device_model"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tune_sessions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("label", sa.String(200), index=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("target", sa.Text),
        sa.Column("knobs", sa.Integer, nullable=False),
        sa.Column("kept", sa.Integer, nullable=False),
        sa.Column("document", sa.JSON, nullable=False),
        sa.Column("stackbench_version", sa.String(32), nullable=False),
        sa.Column("owner", sa.String(32), index=True),
        sa.Column("visibility", sa.String(16), nullable=False, server_default="private"),
    )


def downgrade() -> None:
    op.drop_table("tune_sessions")
