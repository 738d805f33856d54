"""Accounts for `stackbench serve`: accounts, server-side sessions, share links, the server's secret, and
an owner and a visibility on every stored result.

Revision ID: 0005_accounts
Revises: 0004_scans_audits
Create Date: 2026-11-25

Results stored before this revision (and every result the CLI stores without an account) have no owner:
a server shows them to admins only until `stackbench user claim` gives them one (docs/server.md).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_accounts"
down_revision = "0004_scans_audits"
branch_labels = None
depends_on = None

# Every table of results that the server shows gets `owner` and `visibility`; a new kind of stored result
# is one more name here.
OWNED = ("runs", "scans", "audits")


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("csrf_secret", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "share_links",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("object_id", sa.String(32), nullable=False, index=True),
        sa.Column("other_id", sa.String(32)),
        sa.Column("owner", sa.String(32), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    for table in OWNED:
        # No foreign key: SQLite cannot add one to an existing table without copying it; the store clears
        # `owner` itself when an account is removed (store/accounts.py).
        op.add_column(table, sa.Column("owner", sa.String(32), nullable=True))
        op.add_column(table, sa.Column("visibility", sa.String(16), nullable=False, server_default="private"))
        op.create_index(f"ix_{table}_owner", table, ["owner"])


def downgrade() -> None:
    for table in OWNED:
        op.drop_index(f"ix_{table}_owner", table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("visibility")
            batch.drop_column("owner")
    op.drop_table("server_secrets")
    op.drop_table("share_links")
    op.drop_table("sessions")
    op.drop_table("accounts")
