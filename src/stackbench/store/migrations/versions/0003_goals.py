"""Goals: success criteria checked against every run.

Revision ID: 0003_goals
Revises: 0002_samples
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_goals"
down_revision = "0002_samples"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "goals",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("goals")
