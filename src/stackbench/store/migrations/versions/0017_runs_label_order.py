"""The runs list sorted by label, newest label last, reads an index in its order.

Revision ID: 0017_runs_label_order
Revises: 0016_run_facet_tallies
Create Date: 2026-11-27

The runs list sorts by label in any case (`run_filter.SORTS`: lower(label), then the newest first). No
index held that order, so every page sorted by label computed lower() of every visible run's label and
sorted them all to show 50 (at 10,000 runs on SQLite ~4 ms more than the newest-first list).
`ix_runs_label_order` holds lower(label) descending, then the list's tie-breaks and the columns of the
visibility rule, so the list sorted by label descending (its heading's first click from Z to A, and the
bench's page) reads the first page's entries in order and stops. The ascending order (empty labels last)
still sorts. On PostgreSQL the index says NULLS LAST, the order the list asks for; SQLite's descending
order puts NULLs last already (and its index syntax has no NULLS).
"""

from alembic import op

revision = "0017_runs_label_order"
down_revision = "0016_run_facet_tallies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    nulls = " NULLS LAST" if op.get_bind().dialect.name == "postgresql" else ""
    op.execute(f"CREATE INDEX ix_runs_label_order ON runs (lower(label) DESC{nulls}, created_at DESC, id, owner, "
               "visibility)")


def downgrade() -> None:
    op.drop_index("ix_runs_label_order", "runs")
