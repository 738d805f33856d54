"""The runs list counts runs per device model: a column of `runs`, like the host and file system (0012).

Revision ID: 0014_runs_device_model
Revises: 0013_conditions
Create Date: 2026-11-27

A homelab's runs are told apart by the disk they ran on as much as by file system: the runs list's
facets (docs/server.md, "Finding a run") count them per device model too. The model is a fact (the first
of `target.block_devices[].model` that is not empty: a partition has none, the disk under it has) inside
the facts JSON, so, as for 0012's host and file system, it is copied into a column when a run is stored
(`store/rows.listed_columns`) and filled here from the facts of the runs already stored. `ix_runs_finder`
is made again with it, so that the facets still read the index and not the runs.

Adding a column does not rebuild the table on SQLite, so the triggers of 0008 and 0011 stay.
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_runs_device_model"
down_revision = "0013_conditions"
branch_labels = None
depends_on = None

FINDER = ["owner", "visibility", "status", "plan_name", "fs_type", "created_at", "label", "host", "target"]


def upgrade() -> None:
    op.add_column("runs", sa.Column("device_model", sa.String(255)))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE runs SET device_model = (SELECT LEFT(TRIM(d ->> 'model'), 255) FROM "
                   "json_array_elements(CASE WHEN json_typeof(CAST(facts AS json) -> 'target' -> 'block_devices') "
                   "= 'array' THEN CAST(facts AS json) -> 'target' -> 'block_devices' ELSE '[]'::json END) "
                   "WITH ORDINALITY AS e(d, n) WHERE json_typeof(d) = 'object' AND json_typeof(d -> 'model') = "
                   "'string' AND TRIM(d ->> 'model') <> '' ORDER BY n LIMIT 1)")
    else:
        op.execute("UPDATE runs SET device_model = (SELECT substr(trim(json_extract(e.value, '$.model')), 1, 255) "
                   "FROM json_each(runs.facts, '$.target.block_devices') AS e WHERE e.type = 'object' AND "
                   "json_type(e.value, '$.model') = 'text' AND trim(json_extract(e.value, '$.model')) <> '' "
                   "ORDER BY e.key LIMIT 1) WHERE json_valid(facts) AND "
                   "json_type(facts, '$.target.block_devices') = 'array'")
    op.drop_index("ix_runs_finder", "runs")
    op.create_index("ix_runs_finder", "runs", [*FINDER[:5], "device_model", *FINDER[5:]])


def downgrade() -> None:
    op.drop_index("ix_runs_finder", "runs")
    op.create_index("ix_runs_finder", "runs", FINDER)
    # ALTER TABLE DROP COLUMN (SQLite 3.35+), not a batch rebuild, which would drop the triggers on runs
    op.drop_column("runs", "device_model")
