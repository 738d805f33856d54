"""Credentials out of what older versions stored: the values of every column that now scrubs on write.

Revision ID: 0009_scrub_credentials
Revises: 0008_run_tallies
Create Date: 2026-11-28

Up to this version a run's `command` fact kept its command line as typed, so `--db
postgresql://alice:s3cret@db/bench` was stored, pushed, shown on the server's run page to everyone the
run is shared with and in reports; an `ab` session's commands and an audit's evidence could hold others.
The columns that can hold a user's words now replace credentials whenever a value is written
(schema.ScrubbedJSON and ScrubbedText, credentials.py); this migration passes the values already stored
through the same function once, so an upgraded store, and every page, push and report made from it,
holds none either. Values without credentials are left untouched (not even rewritten).

SQLite: the rewrite runs with `secure_delete` on, so the old values are overwritten in the file, not
left in its free pages. PostgreSQL keeps the old row versions until they are vacuumed: run `VACUUM FULL`
on runs, fio_outputs, scans, audits and audit_findings after upgrading to remove them from disk too
(SECURITY.md). It cannot be undone: the downgrade leaves the masked values masked.
"""

import sqlalchemy as sa
from alembic import op

from stackbench.base.credentials import scrub

revision = "0009_scrub_credentials"
down_revision = "0008_run_tallies"
branch_labels = None
depends_on = None

# table: (its key columns, the columns scrubbed on write in schema.py at this revision)
SCRUBBED = {
    "runs": (("id",), ("target", "facts", "warnings")),
    "fio_outputs": (("id",), ("command", "source_name")),
    "scans": (("id",), ("paths", "settings", "document")),
    "audits": (("id",), ("subject_name", "source_detail", "facts", "document")),
    "audit_findings": (("audit_id", "idx"), ("subject", "vm", "disks", "evidence", "fix")),
}
JSON_COLUMNS = frozenset({"facts", "warnings", "command", "paths", "settings", "document", "disks"})
PAGE = 200  # rows read at once: a store of 100,000 runs is not read into memory whole


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    if sqlite:
        secure_delete = bind.exec_driver_sql("PRAGMA secure_delete").scalar()
        bind.exec_driver_sql("PRAGMA secure_delete = ON")
    try:
        for name, (keys, columns) in SCRUBBED.items():
            _scrub_table(bind, name, keys, columns)
    finally:
        if sqlite:
            bind.exec_driver_sql(f"PRAGMA secure_delete = {int(secure_delete)}")


def _scrub_table(bind: sa.engine.Connection, name: str, keys: tuple[str, ...], columns: tuple[str, ...]) -> None:
    table = sa.table(name, *(sa.column(k) for k in keys),
                     *(sa.column(c, sa.JSON if c in JSON_COLUMNS else sa.Text) for c in columns))
    first = table.c[keys[0]]
    last = None
    while True:
        query = sa.select(first).distinct().order_by(first).limit(PAGE)
        page = bind.execute(query if last is None else query.where(first > last)).scalars().all()
        if not page:
            return
        last = page[-1]
        for row in bind.execute(sa.select(table).where(first.in_(page))).mappings().all():
            changed = {}
            for column in columns:
                if row[column] is not None:
                    scrubbed = scrub(row[column])
                    if scrubbed != row[column]:
                        changed[column] = scrubbed
            if changed:
                bind.execute(sa.update(table).where(*(table.c[k] == row[k] for k in keys)).values(**changed))


def downgrade() -> None:
    """Nothing to undo: the credentials are gone, and the older schema reads the masked values as text."""
