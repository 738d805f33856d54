"""The runs list's search reads a substring index, not every visible run twice.

Revision ID: 0018_runs_search_index
Revises: 0017_runs_label_order
Create Date: 2026-11-28

The search (`run_filter.RunFilter.search`: a part of the label, target or host, in any case) is a LIKE
that no B-tree serves, so a search page read every visible run twice, for its facets' counts and for its
page (bench/RESULTS.md, "The finder at 10,000 runs": the one page SQLite missed, and on PostgreSQL a
sequential scan of the runs for the facets). A trigram index answers which runs hold a text of three
characters or more without reading them; the LIKE stays the condition that decides, so the results are
exactly those of the LIKE alone (the index only narrows the runs it is checked on).

- PostgreSQL: `ix_runs_search`, a GIN index of the three columns' trigrams (the `pg_trgm` extension,
  which PostgreSQL 13 and later let the database's owner create). The planner uses it for the ILIKE by
  itself, where it costs less than a scan. Where the extension is neither there nor allowed to this role
  (not installed, or no right to create it), nothing is made: the search scans as before.
- SQLite: `run_search`, an FTS5 table with the trigram tokenizer (SQLite 3.34 and later), one row per run
  (its id, label, target, host), kept by triggers in the same transaction as the run, and read by the
  store for a search of three characters or more (`run_filter.filtered`). Where FTS5 or its trigram
  tokenizer is missing, nothing is made and the search scans as before (the store looks for the table).

SQLite drops a table's triggers with the table: a later migration that rebuilds `runs` in batch mode must
create these again (tests/store/test_run_search_index.py compares the index with the runs at the head).
"""

import sqlite3

import sqlalchemy as sa
from alembic import op

revision = "0018_runs_search_index"
down_revision = "0017_runs_label_order"
branch_labels = None
depends_on = None

_SQLITE_TRIGGERS = [
    "CREATE TRIGGER run_search_insert AFTER INSERT ON runs BEGIN "
    "INSERT INTO run_search (run_id, label, target, host) VALUES (NEW.id, NEW.label, NEW.target, NEW.host); END",
    "CREATE TRIGGER run_search_delete AFTER DELETE ON runs BEGIN "
    "DELETE FROM run_search WHERE run_id = OLD.id; END",
    "CREATE TRIGGER run_search_update AFTER UPDATE OF id, label, target, host ON runs BEGIN "
    "DELETE FROM run_search WHERE run_id = OLD.id; "
    "INSERT INTO run_search (run_id, label, target, host) VALUES (NEW.id, NEW.label, NEW.target, NEW.host); END",
]


def _sqlite_has_trigrams() -> bool:
    """Whether this SQLite has FTS5 with the trigram tokenizer, asked of a database in memory: a statement
    that fails inside the migration's transaction must fail the migration (tests/faults), so the question
    is not asked by trying there."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize = 'trigram')")
        return True
    except sqlite3.Error:
        return False
    finally:
        probe.close()


def _pg_trgm_allowed(bind: sa.Connection) -> bool:
    """Whether pg_trgm is here or may be created by this role: available on the server, and either the role
    is a superuser or the extension is trusted (PostgreSQL 13 and later) and the role may create in this
    database and its current schema."""
    trusted = "false"
    if bind.dialect.server_version_info >= (13,):
        trusted = ("v.trusted AND has_database_privilege(current_database(), 'CREATE') AND "
                   "has_schema_privilege(current_schema(), 'CREATE')")
    return bool(bind.execute(sa.text(
        "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') OR EXISTS (SELECT 1 FROM "
        f"pg_available_extension_versions v WHERE v.name = 'pg_trgm' AND ({trusted} OR (SELECT rolsuper FROM "
        "pg_roles WHERE rolname = current_user)))")).scalar())


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        if _pg_trgm_allowed(bind):  # else the search scans the runs, as before
            op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            op.execute("CREATE INDEX ix_runs_search ON runs USING gin (label gin_trgm_ops, target gin_trgm_ops, "
                       "host gin_trgm_ops)")
        return
    if not _sqlite_has_trigrams():  # no FTS5, or a SQLite older than 3.34: the search scans, as before
        return
    op.execute("CREATE VIRTUAL TABLE run_search USING fts5(run_id UNINDEXED, label, target, host, "
               "tokenize = 'trigram case_sensitive 0')")
    op.execute("INSERT INTO run_search (run_id, label, target, host) SELECT id, label, target, host FROM runs")
    for statement in _SQLITE_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_runs_search")  # pg_trgm stays: other objects may use it
        return
    for name in ("insert", "delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS run_search_{name}")
    op.execute("DROP TABLE IF EXISTS run_search")
