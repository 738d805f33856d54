"""API tokens of `stackbench serve`: `stackbench push` and `/metrics` authenticate with them.

Revision ID: 0006_api_tokens
Revises: 0005_accounts
Create Date: 2026-11-25

A token is stored only as a keyed hash (as share links are); its scope is `push` or `metrics`.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_api_tokens"
down_revision = "0005_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("owner", sa.String(32), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True)),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
    )


def downgrade() -> None:
    op.drop_table("api_tokens")
