"""`stackbench tune -t DIR --audit ID`: a stored audit's findings as tune's reason to try knobs, taken only where
they still describe this machine now (docs/tune.md, "From a stored audit").

An audit stored with `audit --db` is a record of what one machine looked like at one moment. Tune changes this
machine's live settings, so the record is refused unless it can still be about them:

- made from saved facts (`audit --from DIR`): it describes a capture's files (another system's, or this one's
  at another time), not the live state the audit read;
- of another machine: its subject key's machine part (before the first `+`; the rest names --vm-config VMs,
  audit/subject.py) differs from the one the probe gives this machine now;
- made before this machine last booted: the kernel names its disks at boot (an `sdb`, a `loop0`, a `zd16` of
  the audit may be another device now) and every volatile value it saw (read-ahead, scheduler, sysctls,
  module parameters) was reset. Warning and re-reading instead would not be enough: a re-read value is read
  from whatever device holds the old name now.

What is left is re-checked: the machine is audited again, as `tune` without --audit does, and each of the
stored audit's findings is matched with the audit now the way a new stored audit is compared with the last
one (audit/history.py: the same rule about the same subject). One that still holds is proposed as the audit
run now sees it (its evidence current); one that is gone is left out, "already fixed since the audit", or
"not re-checked" when this audit lacks the facts it came from (a --vm-config file, a fact file). Findings the
audit now has that the stored one had not are counted, not proposed: the stored audit is what was asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from stackbench.audit.history import compare_audits
from stackbench.audit.rule import Finding
from stackbench.base.errors import StackbenchError, StoreError
from stackbench.base.units import format_utc
from stackbench.measure.tune_from_audit import live_audit
from stackbench.probe.system import boot_time
from stackbench.store import Store
from stackbench.store.audits import StoredAudit
from stackbench.store.repository import NOUNS

FIX = ("Audit this machine now with `stackbench audit --db URL` (the store tune reads) and give that audit's id to "
       "--audit, or leave out --audit for tune to audit it itself")


@dataclass(frozen=True)
class StoredAuditFindings:
    """A stored audit's findings re-checked on this machine now."""

    audit: StoredAudit
    still: list[Finding]  # its findings that still hold, as the audit run now finds them
    gone: list[tuple[Finding, str]]  # its findings that do not, each with why
    new: list[dict[str, Any]]  # findings now that it did not have: rule, severity, subject

    def to_json(self) -> dict[str, Any]:
        """Which audit the plan came from, as its JSON and title say it."""
        return {"audit_id": self.audit.id, "label": self.audit.label,
                "created_at": self.audit.created_at.isoformat(), "findings": len(self.audit.findings),
                "new_since": self.new}


def stored_audit_findings(store: Store, ref: str) -> StoredAuditFindings:
    """The findings of the audit `ref` names (id, unique prefix or label) that still hold here, or the error
    that says why that audit cannot be used and what to do instead."""
    stored = store.get_audit(_audit_id(store, ref))
    short = stored.id[:12]
    if stored.source.split("+")[0] == "capture":
        raise StackbenchError(f"audit {short} was made from saved facts ({stored.source_detail}), which describe a "
                              "capture's files, not this machine's live settings", FIX)
    subject, found = live_audit()
    machine_then = (stored.subject_key or "").split("+")[0]
    if not machine_then or subject.key is None or machine_then != subject.key:
        raise StackbenchError(_other_machine(short, stored, machine_then, subject.key), FIX)
    booted = boot_time()
    if booted is not None and stored.created_at.timestamp() < booted:
        raise StackbenchError(
            f"audit {short} was made at {format_utc(stored.created_at)}, before this machine last booted "
            f"({format_utc(datetime.fromtimestamp(booted, timezone.utc))}): the kernel names disks anew at boot and "
            "resets the values it saw", FIX)
    changes, marks = compare_audits(
        {"audit_id": stored.id, "created_at": stored.created_at.isoformat(), "facts": stored.facts},
        stored.findings, [f.to_json() for f in found], subject.facts)
    gone = [(_finding(entry), "already fixed since the audit: the audit run now no longer finds it")
            for entry in changes["fixed"]]
    gone += [(_finding(entry), f"not re-checked now ({entry['why']}): audit again with the same facts")
             for entry in changes["not_rechecked"]]
    return StoredAuditFindings(stored, [f for f, mark in zip(found, marks) if mark == "still"], gone, changes["new"])


def _audit_id(store: Store, ref: str) -> str:
    """The id of the audit `ref` names; a reference to a stored item of another kind is named as that."""
    try:
        return store.resolve_any(ref, kinds=("audit",))[1]
    except StoreError as error:
        try:
            kind, found = store.resolve_any(ref)
        except StoreError:
            raise error from None
        raise StoreError(f"{ref!r} is a {NOUNS[kind]} ({found[:12]}), not an audit",
                         "Give the id or label of an audit stored with `stackbench audit --db URL` "
                         "(`stackbench runs --kind audit` lists them)") from None


def _other_machine(short: str, stored: StoredAudit, machine_then: str, machine_now: str | None) -> str:
    if not machine_then:
        return f"audit {short} does not say which machine it is of (its facts had no machine id and no host name)"
    if machine_now is None:
        return f"this machine has no machine id and no host name, so audit {short} cannot be told to be of it"
    return (f"audit {short} is of another machine ({machine_then}{', ' + stored.subject_name if stored.subject_name else ''}"
            f") than this one ({machine_now})")


def _finding(entry: dict[str, Any]) -> Finding:
    """A gone finding as the stored audit had it (audit/history.py's entry of it)."""
    return Finding(entry["rule"], entry["severity"], entry["subject"], entry["evidence"], entry["fix"],
                   vm=entry.get("vm"))
