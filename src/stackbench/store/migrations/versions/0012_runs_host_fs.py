"""The runs list finds runs by host and groups them by file system: both as columns of `runs`.

Revision ID: 0012_runs_host_fs
Revises: 0011_share_links_bound
Create Date: 2026-11-27

The server's runs list (docs/server.md, "Finding a run") searches a run's host name along with its label
and target, and counts runs per file system (a facet). Both are facts (`system.hostname`,
`target.fs_type`) inside the facts JSON; reading and parsing every run's facts for each list page cost
tens of milliseconds at 10,000 runs. They are copied into two columns when a run is stored
(`store/rows.listed_columns`), and filled here from the facts of the runs already stored.

The facets count the runs per plan, file system, status, owner and visibility: `ix_runs_finder` holds
those columns, so they read that index rather than the runs with their facts (at 10,000 runs on SQLite
30-58 ms reading the table, 2 ms the index). A search reads the label, target and host of the runs in the
list's order: `ix_runs_listing` (0007) is made again with those three columns after its own, so that the
page reads the index in order instead of every run's row (a search of 10,000 runs 16-26 ms -> 2-4 ms).

Adding a column does not rebuild the table on SQLite, so the triggers of 0008 and 0011 stay.
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_runs_host_fs"
down_revision = "0011_share_links_bound"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("host", sa.String(255)))
    op.add_column("runs", sa.Column("fs_type", sa.String(64)))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE runs SET host = LEFT(CAST(facts AS json) -> 'system' ->> 'hostname', 255), "
                   "fs_type = LEFT(CAST(facts AS json) -> 'target' ->> 'fs_type', 64)")
    else:
        op.execute("UPDATE runs SET host = substr(json_extract(facts, '$.system.hostname'), 1, 255), "
                   "fs_type = substr(json_extract(facts, '$.target.fs_type'), 1, 64) WHERE json_valid(facts)")
    op.drop_index("ix_runs_listing", "runs")
    op.create_index("ix_runs_listing", "runs", [sa.text("created_at DESC"), "id", "owner", "visibility", "label",
                                                "target", "host"])
    op.create_index("ix_runs_finder", "runs", ["owner", "visibility", "status", "plan_name", "fs_type", "created_at",
                                               "label", "host", "target"])


def downgrade() -> None:
    op.drop_index("ix_runs_finder", "runs")
    op.drop_index("ix_runs_listing", "runs")
    op.create_index("ix_runs_listing", "runs", [sa.text("created_at DESC"), "id", "owner", "visibility"])
    # ALTER TABLE DROP COLUMN (SQLite 3.35+), not a batch rebuild, which would drop the triggers on runs
    op.drop_column("runs", "fs_type")
    op.drop_column("runs", "host")
