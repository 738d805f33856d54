"""Stored smallblocks scans and stored audits.

Revision ID: 0004_scans_audits
Revises: 0003_goals
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_scans_audits"
down_revision = "0003_goals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scans",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("label", sa.String(200), index=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("paths", sa.JSON, nullable=False),
        sa.Column("files", sa.BigInteger, nullable=False),
        sa.Column("bytes", sa.BigInteger, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("files_per_s", sa.Float, nullable=False),
        sa.Column("special_small_blocks", sa.BigInteger),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("document", sa.JSON, nullable=False),
        sa.Column("stackbench_version", sa.String(32), nullable=False),
    )
    op.create_table(
        "audits",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("label", sa.String(200), index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("subject_key", sa.String(200), index=True),
        sa.Column("subject_name", sa.Text),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("source_detail", sa.Text),
        sa.Column("zfs_version", sa.String(100)),
        sa.Column("findings_count", sa.Integer, nullable=False),
        sa.Column("worst_severity", sa.String(8)),
        sa.Column("previous_id", sa.String(32)),
        sa.Column("facts", sa.JSON, nullable=False),
        sa.Column("document", sa.JSON, nullable=False),
        sa.Column("stackbench_version", sa.String(32), nullable=False),
    )
    op.create_table(
        "audit_findings",
        sa.Column("audit_id", sa.String(32), sa.ForeignKey("audits.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("idx", sa.Integer, primary_key=True),
        sa.Column("rule", sa.String(64), nullable=False, index=True),
        sa.Column("severity", sa.String(8), nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("vm", sa.Text),
        sa.Column("disks", sa.JSON, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
        sa.Column("fix", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("audit_findings")
    op.drop_table("audits")
    op.drop_table("scans")
