"""How many runs there are per combination of the runs list's facets, kept by the database.

Revision ID: 0016_run_facet_tallies
Revises: 0015_tune_sessions
Create Date: 2026-11-27

The runs list's facets (docs/server.md, "Finding a run") counted every visible run on every page: a
GROUP BY over all of them, ~2.4 ms of a 8.8 ms page with 10,000 runs on SQLite (bench/RESULTS.md, "The
finder at 10,000 runs"). `run_facet_tallies` holds one row per (owner, visibility, status, plan, file
system, device model) with its number of runs, a few dozen rows whatever the number of runs, so the
unfiltered list and a list filtered only by facet values (`run_filter.tallied`) read their counts and
their total from it. A search or a date range still counts the runs.

Triggers keep it, exactly as `run_tallies` (0008): a run stored, deleted, claimed, shared, unowned or
finished moves its count in the same transaction, through whichever path wrote it; the counts of the runs
already stored are taken here. A key cannot hold NULL (SQLite's unique keys treat NULLs as distinct, so
an upsert would add a row each time), so a run without an owner is tallied under the owner '' (as in 0008)
and a missing plan, file system or device model as '' with its bit set in `absent` (1, 2, 4): an empty
plan name, which an upload may carry, stays apart from no plan.

SQLite drops a table's triggers with the table: a later migration that rebuilds `runs` in batch mode
must create these again. tests/store/test_run_facet_tallies.py compares the tallies with a GROUP BY of
the runs at the head revision and fails if they are gone.
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_run_facet_tallies"
down_revision = "0015_tune_sessions"
branch_labels = None
depends_on = None

KEY = "owner, visibility, status, plan_name, fs_type, device_model, absent"


def _key(row: str) -> str:
    """The key's values of `row` (NEW, OLD, or the runs' own columns in the first count), in KEY's order."""
    prefix = f"{row}." if row else ""
    return (f"coalesce({prefix}owner, ''), {prefix}visibility, {prefix}status, coalesce({prefix}plan_name, ''), "
            f"coalesce({prefix}fs_type, ''), coalesce({prefix}device_model, ''), "
            f"CASE WHEN {prefix}plan_name IS NULL THEN 1 ELSE 0 END + CASE WHEN {prefix}fs_type IS NULL THEN 2 "
            f"ELSE 0 END + CASE WHEN {prefix}device_model IS NULL THEN 4 ELSE 0 END")


def _add(table: str) -> str:
    return (f"INSERT INTO run_facet_tallies ({KEY}, run_count) VALUES ({_key('NEW')}, 1) "
            f"ON CONFLICT ({KEY}) DO UPDATE SET run_count = {table}.run_count + 1")


_TAKE = f"UPDATE run_facet_tallies SET run_count = run_count - 1 WHERE ({KEY}) = ({_key('OLD')})"
_WATCHED = "owner, visibility, status, plan_name, fs_type, device_model"

# The same three triggers as 0008's, on six columns instead of two.
_SQLITE = [
    f"CREATE TRIGGER run_facet_tallies_insert AFTER INSERT ON runs BEGIN {_add('run_facet_tallies')}; END",
    f"CREATE TRIGGER run_facet_tallies_delete AFTER DELETE ON runs BEGIN {_TAKE}; END",
    f"CREATE TRIGGER run_facet_tallies_update AFTER UPDATE OF {_WATCHED} ON runs BEGIN "
    f"{_TAKE}; {_add('run_facet_tallies')}; END",
]

_POSTGRESQL = [
    f"""CREATE OR REPLACE FUNCTION run_facet_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP IN ('DELETE', 'UPDATE') THEN
           {_TAKE};
         END IF;
         IF TG_OP IN ('INSERT', 'UPDATE') THEN
           {_add('run_facet_tallies')};
         END IF;
         RETURN NULL;
       END $$""",
    f"""CREATE TRIGGER run_facet_tallies_keep AFTER INSERT OR DELETE OR UPDATE OF {_WATCHED} ON runs
       FOR EACH ROW EXECUTE FUNCTION run_facet_tallies_keep()""",
]


def upgrade() -> None:
    op.create_table(
        "run_facet_tallies",
        sa.Column("owner", sa.String(32), nullable=False),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("plan_name", sa.String(100), nullable=False),
        sa.Column("fs_type", sa.String(64), nullable=False),
        sa.Column("device_model", sa.String(255), nullable=False),
        sa.Column("absent", sa.Integer, nullable=False),
        sa.Column("run_count", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint(*KEY.split(", "), name="pk_run_facet_tallies"),
    )
    op.execute(f"INSERT INTO run_facet_tallies ({KEY}, run_count) SELECT {_key('')}, count(*) FROM runs "
               f"GROUP BY {_key('')}")
    for statement in _POSTGRESQL if op.get_bind().dialect.name == "postgresql" else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER run_facet_tallies_keep ON runs")
        op.execute("DROP FUNCTION run_facet_tallies_keep()")
    else:
        for name in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER run_facet_tallies_{name}")
    op.drop_table("run_facet_tallies")
