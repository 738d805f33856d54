"""The results store as its callers know it: one `Store`, made of its aggregates, the ways to open one, and
the records its methods take and return (callers import them from here).

Each aggregate is a module of its own: runs (store/runs.py), cells with their fio outputs, replicates and
samples (cells.py), goals, scans, audits and tune sessions; their base, the database with its engines and its schema, is
database.py, and the statements every page reads are reads.py. `Store` is their sum (each is a mixin over
`Database`, so a method is written once, next to its table's other statements) plus what spans them:
naming any stored item by id, prefix or label, and deleting items of several kinds at once. The server's
own tables (accounts, tokens, rate limits) are separate objects over a Store, since only the server uses
them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from sqlalchemy import delete, select

from stackbench.base.errors import StoreError, UsageError
from stackbench.model.results import Run
from stackbench.store import schema
from stackbench.store.audits import Audits, StoredAudit
from stackbench.store.cells import CellRecord, Cells, OutputRecord
from stackbench.store.database import default_db_url, guard_public_methods
from stackbench.store.database_url import database_url
from stackbench.store.goals import Goals
from stackbench.store.runs import Runs, delete_run_rows
from stackbench.store.scans import Scans, StoredScan
from stackbench.store.tune_sessions import StoredTuneSession, TuneSessions

# The store's face: the Store, how to open one, and the records its methods take and return.
__all__ = ["KINDS", "CellRecord", "OutputRecord", "Store", "StoredAudit", "StoredScan", "StoredTuneSession",
           "open_store", "open_store_to_read"]

KINDS = ("run", "scan", "audit", "tune")
NOUNS = {"run": "run", "scan": "scan", "audit": "audit", "tune": "tune session"}  # a kind, as messages name it


def open_store(url: str | None = None) -> "Store":
    if url is not None and not url.strip():
        raise UsageError(
            "--db (or STACKBENCH_DB) is empty", "Pass a file path or URL, or leave it out for the default store"
        )
    return Store(url or default_db_url())


def open_store_to_read(url: str | None = None) -> "Store | None":
    """The store as it is, for a command that promises to write nothing (`run --dry-run`): None when it does
    not exist yet or its schema is not this release's, instead of creating or migrating it."""
    if url is not None and not url.strip():
        return None
    normal = database_url(url or default_db_url())  # a mistake in --db fails the dry run as it fails the run
    if normal.startswith("sqlite:///") and not Path(normal.removeprefix("sqlite:///").split("?", 1)[0]).is_file():
        return None
    try:
        return Store(url or default_db_url(), migrate=False)
    except StoreError:
        return None


@guard_public_methods  # every public method reports a database failure as one line
class Store(Runs, Cells, Goals, Scans, Audits, TuneSessions):
    """The results store: runs, their cells and samples, goals, scans, audits and tune sessions."""

    def resolve(self, ref: str) -> str:
        """A run by full id, unique id prefix (at least 4 characters) or label (the newest with it)."""
        return self.resolve_any(ref, kinds=("run",))[1]

    def get_run(self, ref: str) -> Run:
        return self.run_by_id(self.resolve(ref))

    def get_tune_session(self, ref: str) -> StoredTuneSession:
        """A tune session by full id, unique id prefix (at least 4 characters) or label, as runs are found."""
        return self.tune_session_by_id(self.resolve_any(ref, kinds=("tune",))[1])

    def resolve_any(self, ref: str, kinds: Sequence[str] = KINDS) -> tuple[str, str]:
        """(kind, id) of a stored run, scan, audit or tune session named by full id, unique id prefix (4+ hex characters)
        or label (the newest with it). Ids are random, so a prefix names at most one item of any kind in
        practice; a label that names items of two kinds is refused rather than guessed."""
        tables = {"run": schema.runs, "scan": schema.scans, "audit": schema.audits, "tune": schema.tune_sessions}
        chosen = {kind: tables[kind] for kind in kinds}
        listed = [NOUNS[kind] for kind in chosen]
        names = listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"
        with self.reader.connect() as connection:
            for kind, table in chosen.items():
                if connection.execute(select(table.c.id).where(table.c.id == ref)).first():
                    return kind, ref
            if len(ref) >= 4 and all(c in "0123456789abcdef" for c in ref.lower()):
                matches = [
                    (kind, found)
                    for kind, table in chosen.items()
                    for found in connection.execute(
                        select(table.c.id).where(table.c.id.like(ref.lower() + "%")).limit(3)
                    ).scalars().all()
                ]
                if len(matches) == 1:
                    return matches[0]
                if len(matches) > 1:
                    raise StoreError(
                        f"id prefix {ref!r} matches several {listed[0] + 's' if len(listed) == 1 else 'stored items'} "
                        f"({', '.join(f'{NOUNS[k]} {found[:12]}' for k, found in matches)})",
                        "Give more characters of the id",
                    )
            labelled = []
            for kind, table in chosen.items():
                row = connection.execute(
                    select(table.c.id).where(table.c.label == ref).order_by(table.c.created_at.desc()).limit(1)
                ).first()
                if row:
                    labelled.append((kind, row[0]))
        if len(labelled) == 1:
            return labelled[0]
        if len(labelled) > 1:
            shown = ", ".join(f"{NOUNS[kind]} {found[:12]}" for kind, found in labelled)
            raise StoreError(f"the label {ref!r} names a {' and a '.join(NOUNS[k] for k, _ in labelled)} ({shown})",
                             "Give the id instead (`stackbench runs --label LABEL` lists them)")
        raise StoreError(f"no {names} with id or label {ref!r}", "List what is stored with `stackbench runs`")

    def delete_stored(
        self, *, runs: Sequence[str] = (), scans: Sequence[str] = (), audits: Sequence[str] = (),
        tunes: Sequence[str] = (),
    ) -> int:
        """Delete runs (with their cells, samples and outputs), scans, audits (with their findings) and tune
        sessions (their arms' runs stay, as runs of their own) in one transaction: all or none. Children
        first, as `delete_runs` explains."""
        run_ids, scan_ids, audit_ids, tune_ids = (list(dict.fromkeys(ids)) for ids in (runs, scans, audits, tunes))
        deleted = 0
        with self.engine.begin() as connection:
            if run_ids:
                deleted += delete_run_rows(connection, run_ids)
            if scan_ids:
                deleted += connection.execute(delete(schema.scans).where(schema.scans.c.id.in_(scan_ids))).rowcount
            if audit_ids:
                connection.execute(delete(schema.audit_findings).where(schema.audit_findings.c.audit_id.in_(audit_ids)))
                deleted += connection.execute(delete(schema.audits).where(schema.audits.c.id.in_(audit_ids))).rowcount
            if tune_ids:
                table = schema.tune_sessions
                deleted += connection.execute(delete(table).where(table.c.id.in_(tune_ids))).rowcount
        return deleted
