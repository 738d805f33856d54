"""Stored `smallblocks --db` scans: the listed columns and the JSON document as printed (docs/json.md)."""

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


@dataclass(frozen=True)
class StoredScan:
    """A `smallblocks --db` scan as stored: the listed columns and the printed JSON document."""

    id: str
    label: str | None
    status: str  # complete | partial
    created_at: datetime
    paths: list[str]
    files: int
    bytes: int
    seconds: float
    files_per_s: float
    document: Any  # the `smallblocks --json` document; checked by whoever reads it (it may be damaged)


class Scans(Database):
    """The store's scans, each one row."""

    def add_scan(
        self, *, scan_id: str, label: str | None, created_at: datetime, status: str, document: dict[str, Any]
    ) -> str:
        """Store a smallblocks scan in one transaction; `document` is its JSON as printed (docs/json.md)."""
        check("a label", label)
        recommendation = document.get("recommendation") or {}
        with self.engine.begin() as connection:
            connection.execute(
                insert(schema.scans).values(
                    id=scan_id, label=label, status=status, created_at=created_at,
                    paths=list(document["paths"]), files=int(document["files"]), bytes=int(document["bytes"]),
                    seconds=float(document["seconds"]), files_per_s=float(document["files_per_s"]),
                    special_small_blocks=(recommendation.get("special_small_blocks")
                                          if recommendation.get("special_size") is not None else None),
                    settings=document["settings"], document=document, stackbench_version=__version__,
                )
            )
        return scan_id

    def get_scan(self, scan_id: str) -> StoredScan:
        with damage_reported("scan", scan_id), self.reader.connect() as connection:
            row = connection.execute(select(schema.scans).where(schema.scans.c.id == scan_id)).mappings().first()
            if row is None:
                raise StoreError(f"no scan with id {scan_id!r}",
                                 "List the stored scans with `stackbench runs --kind scan`")
            return _scan_from_row(row)

    def list_scans(self, limit: int | None = None, label: str | None = None) -> list[StoredScan]:
        """Scans newest first, without their documents (a damaged document does not stop a listing)."""
        scans = schema.scans
        query = select(*[c for c in scans.c if c.name != "document"]).order_by(scans.c.created_at.desc())
        if label is not None:
            query = query.where(scans.c.label == label)
        if limit:
            query = query.limit(limit)
        with damage_reported("scan", None), self.reader.connect() as connection:
            return [_scan_from_row({**row, "document": None}) for row in connection.execute(query).mappings().all()]


def _scan_from_row(row: Any) -> StoredScan:
    return StoredScan(
        id=row["id"], label=row["label"], status=row["status"], created_at=aware(row["created_at"]),
        paths=list(row["paths"] or []), files=int(row["files"]), bytes=int(row["bytes"]),
        seconds=float(row["seconds"]), files_per_s=float(row["files_per_s"]), document=row["document"],
    )
