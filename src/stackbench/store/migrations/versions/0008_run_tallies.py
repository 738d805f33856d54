"""How many runs each owner has at each visibility, kept by the database: the runs list's total.

Revision ID: 0008_run_tallies
Revises: 0007_rate_events
Create Date: 2026-11-26

Every page of the server's runs list says how many runs its viewer may see. Counting them visited every
run's entry on every page (about 1.4 ms of PostgreSQL's CPU with 10,000 runs, a third of what a list page
costs the database; bench/serve_bench.py). `run_tallies` holds one row per (owner, visibility) with its
number of runs, so the unfiltered total is a sum over a few rows, whatever the number of runs.

Triggers keep it, not the code that writes runs: a run stored, deleted, claimed, made team or private, or
left without an owner by `user remove` moves its count in the same transaction, through whichever path
wrote it (the CLI, the server, an upload, a future command). A run without an owner is tallied under
the empty owner '' (account ids are never empty), so the key needs no NULL. The counts of the runs
already stored are taken when the migration runs.

SQLite drops a table's triggers with the table: a later migration that rebuilds `runs` in batch mode
(a copy and rename) must create these triggers again. tests/store/test_run_tallies.py compares the
tallies with a count of the runs at the head revision and fails if they are gone.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_run_tallies"
down_revision = "0007_rate_events"
branch_labels = None
depends_on = None

# The same three triggers on both databases: AFTER INSERT adds one, AFTER DELETE takes one away, and a
# change of owner or visibility does both (net zero when neither really changed).
_SQLITE = [
    """CREATE TRIGGER run_tallies_insert AFTER INSERT ON runs BEGIN
         INSERT INTO run_tallies (owner, visibility, run_count) VALUES (coalesce(NEW.owner, ''), NEW.visibility, 1)
         ON CONFLICT (owner, visibility) DO UPDATE SET run_count = run_count + 1;
       END""",
    """CREATE TRIGGER run_tallies_delete AFTER DELETE ON runs BEGIN
         UPDATE run_tallies SET run_count = run_count - 1 WHERE owner = coalesce(OLD.owner, '') AND visibility = OLD.visibility;
       END""",
    """CREATE TRIGGER run_tallies_update AFTER UPDATE OF owner, visibility ON runs BEGIN
         UPDATE run_tallies SET run_count = run_count - 1 WHERE owner = coalesce(OLD.owner, '') AND visibility = OLD.visibility;
         INSERT INTO run_tallies (owner, visibility, run_count) VALUES (coalesce(NEW.owner, ''), NEW.visibility, 1)
         ON CONFLICT (owner, visibility) DO UPDATE SET run_count = run_count + 1;
       END""",
]

_POSTGRESQL = [
    """CREATE OR REPLACE FUNCTION run_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP IN ('DELETE', 'UPDATE') THEN
           UPDATE run_tallies SET run_count = run_count - 1
             WHERE owner = coalesce(OLD.owner, '') AND visibility = OLD.visibility;
         END IF;
         IF TG_OP IN ('INSERT', 'UPDATE') THEN
           INSERT INTO run_tallies (owner, visibility, run_count) VALUES (coalesce(NEW.owner, ''), NEW.visibility, 1)
           ON CONFLICT (owner, visibility) DO UPDATE SET run_count = run_tallies.run_count + 1;
         END IF;
         RETURN NULL;
       END $$""",
    """CREATE TRIGGER run_tallies_keep AFTER INSERT OR DELETE OR UPDATE OF owner, visibility ON runs
       FOR EACH ROW EXECUTE FUNCTION run_tallies_keep()""",
]


def upgrade() -> None:
    op.create_table(
        "run_tallies",
        sa.Column("owner", sa.String(32), primary_key=True),
        sa.Column("visibility", sa.String(16), primary_key=True),
        sa.Column("run_count", sa.Integer, nullable=False),
    )
    op.execute(
        "INSERT INTO run_tallies (owner, visibility, run_count) "
        "SELECT coalesce(owner, ''), visibility, count(*) FROM runs GROUP BY coalesce(owner, ''), visibility"
    )
    for statement in _POSTGRESQL if op.get_bind().dialect.name == "postgresql" else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER run_tallies_keep ON runs")
        op.execute("DROP FUNCTION run_tallies_keep()")
    else:
        for name in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER run_tallies_{name}")
    op.drop_table("run_tallies")
