"""Rate-limit events of `stackbench serve` in the store, and an index for the runs list.

Revision ID: 0007_rate_events
Revises: 0006_api_tokens
Create Date: 2026-11-25

The limits on failed logins and on lookups that find nothing were counted in one server process's
memory; with several worker processes (`serve --workers N`) each would have counted alone, letting N
times the limit through. They are counted here instead, so every process of a server (and every server
on one PostgreSQL database) sees the same count, and a restart no longer forgets it. The key is stored
only as a keyed hash (an address or an account name is not kept in the clear).

`ix_runs_listing` serves the runs list's order (newest first) and its visibility test from the index
alone, so counting the visible runs and skipping to a deep page read the index, not every run's facts.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_rate_events"
down_revision = "0006_api_tokens"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rate_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, index=True),
    )
    op.create_index("ix_rate_events_key", "rate_events", ["scope", "key_hash", "at"])
    op.create_index("ix_runs_listing", "runs", [sa.text("created_at DESC"), "id", "owner", "visibility"])


def downgrade() -> None:
    op.drop_index("ix_runs_listing", table_name="runs")
    op.drop_index("ix_rate_events_key", table_name="rate_events")
    op.drop_table("rate_events")
