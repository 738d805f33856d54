"""Stored `tune --apply` sessions: the listed columns and the session's JSON document as printed
(docs/json.md, `tune --json`), kept when a session ends so that `show` can print its report again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select

from stackbench import __version__
from stackbench.base.errors import StoreError
from stackbench.base.usertext import check
from stackbench.store import schema
from stackbench.store.database import Database
from stackbench.store.failures import damage_reported
from stackbench.store.rows import aware

TUNE_STATUSES = ("completed", "interrupted", "failed")


@dataclass(frozen=True)
class StoredTuneSession:
    """A tune session as stored: how it ended, what it was on, and its printed JSON document."""

    id: str
    label: str | None
    status: str  # completed | interrupted | failed
    created_at: datetime
    finished_at: datetime | None
    target: str | None
    knobs: int
    kept: int
    document: Any  # the `tune --json` document; checked by whoever reads it (it may be damaged)


class TuneSessions(Database):
    """The store's tune sessions, each one row."""

    def add_tune_session(self, *, session_id: str, label: str | None, status: str, created_at: datetime,
                         finished_at: datetime | None, document: dict[str, Any]) -> str:
        """Store a tune session as it ended; `document` is its JSON as `tune --json` prints it."""
        check("a label", label)
        if status not in TUNE_STATUSES:
            raise StoreError(f"unknown tune session status {status!r}", "Use completed, interrupted or failed")
        knobs = list(document.get("knobs") or [])
        with self.engine.begin() as connection:
            connection.execute(insert(schema.tune_sessions).values(
                id=session_id, label=label, status=status, created_at=created_at, finished_at=finished_at,
                target=document.get("target"), knobs=len(knobs),
                kept=sum(1 for knob in knobs if knob.get("decision") == "kept"), document=document,
                stackbench_version=__version__))
        return session_id

    def tune_session_by_id(self, session_id: str) -> StoredTuneSession:
        table = schema.tune_sessions
        with damage_reported("tune session", session_id), self.reader.connect() as connection:
            row = connection.execute(select(table).where(table.c.id == session_id)).mappings().first()
            if row is None:
                raise StoreError(f"no tune session with id {session_id!r}",
                                 "List the stored tune sessions with `stackbench runs --kind tune`")
            return _session_from_row(row)

    def list_tune_sessions(self, limit: int | None = None, label: str | None = None) -> list[StoredTuneSession]:
        """Tune sessions newest first, without their documents (a damaged document does not stop a listing)."""
        table = schema.tune_sessions
        query = select(*[c for c in table.c if c.name != "document"]).order_by(table.c.created_at.desc())
        if label is not None:
            query = query.where(table.c.label == label)
        if limit:
            query = query.limit(limit)
        with damage_reported("tune session", None), self.reader.connect() as connection:
            return [_session_from_row({**row, "document": None}) for row in connection.execute(query).mappings().all()]


def _session_from_row(row: Any) -> StoredTuneSession:
    finished = row["finished_at"]
    return StoredTuneSession(
        id=row["id"], label=row["label"], status=row["status"], created_at=aware(row["created_at"]),
        finished_at=None if finished is None else aware(finished), target=row["target"], knobs=int(row["knobs"]),
        kept=int(row["kept"]), document=row["document"])
