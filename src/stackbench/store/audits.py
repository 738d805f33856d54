"""Stored `audit --db` audits: who and what was audited, one row per finding, and the JSON document as
printed (docs/json.md); the newest audit of a subject is what the next one is compared with."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import insert, select

from stackbench import __version__
from stackbench.base.errors import StoreError
from stackbench.base.usertext import check
from stackbench.store import schema
from stackbench.store.database import Database
from stackbench.store.failures import damage_reported
from stackbench.store.rows import aware


@dataclass(frozen=True)
class StoredAudit:
    """An `audit --db` audit as stored: who and what was audited, its findings and the printed JSON."""

    id: str
    label: str | None
    created_at: datetime
    subject_key: str | None
    subject_name: str | None
    source: str  # host | guest | capture | config
    source_detail: str | None
    zfs_version: str | None
    findings_count: int
    worst_severity: str | None
    previous_id: str | None
    facts: Any
    document: Any  # the `audit --json` document as printed
    findings: tuple[dict[str, Any], ...] = ()  # rule, severity, subject, vm, disks, evidence, fix


class Audits(Database):
    """The store's audits with their findings."""

    def add_audit(
        self,
        *,
        audit_id: str,
        label: str | None,
        created_at: datetime,
        subject_key: str | None,
        subject_name: str | None,
        source: str,
        source_detail: str | None,
        zfs_version: str | None,
        previous_id: str | None,
        facts: dict[str, Any],
        document: dict[str, Any],
        findings: Sequence[dict[str, Any]],
    ) -> str:
        """Store an audit and its findings (most severe first, as the audit orders them) in one transaction:
        all of it or nothing."""
        check("a label", label)
        with self.engine.begin() as connection:
            connection.execute(
                insert(schema.audits).values(
                    id=audit_id, label=label, created_at=created_at, subject_key=subject_key,
                    subject_name=subject_name, source=source, source_detail=source_detail, zfs_version=zfs_version,
                    findings_count=len(findings), worst_severity=findings[0]["severity"] if findings else None,
                    previous_id=previous_id, facts=facts, document=document,
                    stackbench_version=__version__,
                )
            )
            if findings:
                connection.execute(
                    insert(schema.audit_findings),
                    [
                        {"audit_id": audit_id, "idx": index, "rule": f["rule"], "severity": f["severity"],
                         "subject": f["subject"], "vm": f.get("vm"), "disks": list(f.get("disks") or []),
                         "evidence": f["evidence"], "fix": f["fix"]}
                        for index, f in enumerate(findings)
                    ],
                )
        return audit_id

    def get_audit(self, audit_id: str) -> StoredAudit:
        with damage_reported("audit", audit_id), self.reader.connect() as connection:
            row = connection.execute(select(schema.audits).where(schema.audits.c.id == audit_id)).mappings().first()
            if row is None:
                raise StoreError(
                    f"no audit with id {audit_id!r}", "List the stored audits with `stackbench runs --kind audit`"
                )
            return _audit_from_row(row, _findings_of(connection, audit_id))

    def latest_audit(self, subject_key: str) -> StoredAudit | None:
        """The newest stored audit of this subject, with its findings: what a new audit is compared with."""
        audits = schema.audits
        with self.reader.connect() as connection:
            found = connection.execute(
                select(audits.c.id).where(audits.c.subject_key == subject_key)
                .order_by(audits.c.created_at.desc()).limit(1)
            ).first()
        return None if found is None else self.get_audit(found[0])

    def list_audits(self, limit: int | None = None, label: str | None = None) -> list[StoredAudit]:
        """Audits newest first, without their findings, facts and documents."""
        audits = schema.audits
        query = select(*[c for c in audits.c if c.name not in ("document", "facts")]).order_by(
            audits.c.created_at.desc()
        )
        if label is not None:
            query = query.where(audits.c.label == label)
        if limit:
            query = query.limit(limit)
        with damage_reported("audit", None), self.reader.connect() as connection:
            return [_audit_from_row({**row, "document": None, "facts": None}, ())
                    for row in connection.execute(query).mappings().all()]


def _findings_of(connection: Any, audit_id: str) -> tuple[dict[str, Any], ...]:
    table = schema.audit_findings
    rows = connection.execute(
        select(table).where(table.c.audit_id == audit_id).order_by(table.c.idx)
    ).mappings().all()
    return tuple(
        {"rule": r["rule"], "severity": r["severity"], "subject": r["subject"], "vm": r["vm"],
         "disks": r["disks"] or [], "evidence": r["evidence"], "fix": r["fix"]}
        for r in rows
    )


def _audit_from_row(row: Any, findings: tuple[dict[str, Any], ...]) -> StoredAudit:
    return StoredAudit(
        id=row["id"], label=row["label"], created_at=aware(row["created_at"]), subject_key=row["subject_key"],
        subject_name=row["subject_name"], source=row["source"], source_detail=row["source_detail"],
        zfs_version=row["zfs_version"], findings_count=int(row["findings_count"]),
        worst_severity=row["worst_severity"], previous_id=row["previous_id"],
        facts=row["facts"], document=row["document"], findings=findings,
    )
