"""An audit from the facts to the store: the facts gathered (captured on this machine, or read from a saved
directory), the rules run, the document assembled as `audit --json` prints it, what changed since the
previous stored audit of the same subject (history.py), and the audit stored with its findings.

`audit` (cli/audit.py) parses its options, calls `gather_facts`, `assemble` and, with --db, `keep`, and
prints the document. Every finding is stored and compared whatever --min-severity hides: the option only
filters what the document shows. The store is handed in (store/audits.py's methods: `latest_audit`,
`add_audit`), so audit/ does not import the store, which sits above it.
"""

from __future__ import annotations

import errno
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Protocol

from stackbench.audit.facts import Facts, load_facts
from stackbench.audit.history import compare_audits
from stackbench.audit.probe import CAPTURES, save_facts
from stackbench.audit.report import ORDER, AuditReport, run_rules
from stackbench.audit.rules import REGISTRY
from stackbench.audit.subject import AuditSubject, audit_subject
from stackbench.base.errors import StackbenchError
from stackbench.model.results import new_id


class AuditStore(Protocol):
    """What an audit needs of the store: the newest stored audit of a subject (a `StoredAudit`: its `id`,
    `created_at`, `facts` and `findings`), and storing one."""

    def latest_audit(self, subject_key: str) -> Any: ...

    add_audit: Callable[..., str]


@dataclass
class Audit:
    """An audit made: the document as printed, and what is stored besides it."""

    id: str | None  # None: not to be stored (no --db), or its storing failed
    label: str | None
    created_at: datetime
    subject: AuditSubject
    zfs_version: str | None
    shown: AuditReport  # the findings --min-severity lets through, and the fact files that could not be read
    findings: list[dict[str, Any]]  # every finding's JSON, whatever --min-severity hides: stored and compared
    previous_id: str | None  # the previous stored audit of the subject, that `document["changes"]` compares with
    document: dict[str, Any]  # the `audit --json` document


def save_into(directory: Path) -> dict[str, str]:
    """The probe, with its failures turned into one-line errors that name the fix."""
    try:
        return save_facts(directory)
    except FileExistsError:
        raise StackbenchError(f"{directory} already holds saved facts (probe.json)",
                              "Give a new directory, or audit these with `stackbench audit --from DIR`") from None
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StackbenchError(f"no space left to save the facts in {directory}; nothing was kept",
                                  "Free some space there or give a directory on another file system") from None
        raise StackbenchError(f"cannot save the facts in {directory}: {error.strerror or error}",
                              "Give a directory you can write to") from None


def gather_facts(
    from_dir: Path | None, vm_configs: list[Path] | None, storage_cfg: Path | None
) -> tuple[Facts, AuditSubject]:
    """The facts to audit and their subject: those saved in `from_dir`, or, without it, captured on this
    machine into a temporary directory (removed once read); plus `vm_configs` and `storage_cfg`."""
    if from_dir is not None:
        if not from_dir.is_dir():
            raise StackbenchError(f"{from_dir} is not a directory of saved facts",
                                  "Create one with `stackbench facts save DIR`")
        _require_saved_facts(from_dir, bool(vm_configs))
        facts = load_facts(from_dir, vm_configs, storage_cfg)
        return facts, audit_subject(from_dir, facts, captured_here=False, vm_configs=vm_configs,
                                    unchecked=unchecked_areas(facts))
    with tempfile.TemporaryDirectory(prefix="stackbench-facts-") as tmp:
        save_into(Path(tmp))
        facts = load_facts(Path(tmp), vm_configs, storage_cfg)
        return facts, audit_subject(Path(tmp), facts, captured_here=True, vm_configs=vm_configs,
                                    unchecked=unchecked_areas(facts))


def assemble(
    facts: Facts, subject: AuditSubject, *, min_severity: str, label: str | None, store: AuditStore | None
) -> Audit:
    """Run every rule over `facts` and assemble the document; with a store, compare it with the previous
    stored audit of the subject and give it the id it will be stored under."""
    def shown(severity: str) -> bool:
        return ORDER[severity] <= ORDER[min_severity]

    everything = run_rules(facts, REGISTRY)  # stored and compared whole; --min-severity filters what is shown
    report = AuditReport([f for f in everything.findings if shown(f.severity)], everything.problems)
    document = report.to_json(facts)
    created = datetime.now(timezone.utc)
    audit_id = new_id() if store is not None else None
    all_findings = [f.to_json() for f in everything.findings]
    previous = store.latest_audit(subject.key) if store is not None and subject.key else None
    changes, marks = None, [None] * len(report.findings)
    if previous is not None:
        changes, all_marks = compare_audits(
            {"audit_id": previous.id, "created_at": previous.created_at.isoformat(), "facts": previous.facts},
            previous.findings, all_findings, subject.facts,
        )
        changes = {**changes, **{key: [e for e in changes[key] if shown(e["severity"])]
                                 for key in ("fixed", "new", "not_rechecked")}}
        marks = [mark for f, mark in zip(everything.findings, all_marks) if shown(f.severity)]
    for finding, mark in zip(document["findings"], marks):
        finding["change"] = mark
    document.update({
        "audit_id": audit_id, "label": label, "created_at": created.isoformat(),
        "subject": {"key": subject.key, "name": subject.name, "source": subject.source, "detail": subject.detail},
        "facts": subject.facts, "min_severity": min_severity, "rules_checked": len(REGISTRY), "changes": changes,
    })
    return Audit(audit_id, label, created, subject, facts.zfs_version, report, all_findings,
                 previous.id if previous is not None else None, document)


def keep(store: AuditStore, audit: Audit) -> StackbenchError | None:
    """Store `audit` with its findings, all or nothing. On failure the store's error, and the audit's id is
    taken out of it and its document, since nothing holds it: the audit is still shown, then the error."""
    assert audit.id is not None, "an audit assembled without a store has no id to be stored under"
    try:
        store.add_audit(
            audit_id=audit.id, label=audit.label, created_at=audit.created_at, subject_key=audit.subject.key,
            subject_name=audit.subject.name, source=audit.subject.source, source_detail=audit.subject.detail,
            zfs_version=audit.zfs_version, previous_id=audit.previous_id, facts=audit.subject.facts,
            document=audit.document, findings=audit.findings,
        )
    except StackbenchError as error:
        audit.id = audit.document["audit_id"] = None
        return error
    return None


def _require_saved_facts(directory: Path, have_vm_configs: bool) -> None:
    """Refuse a directory that holds none of the files `facts save` writes: no data is not a clean bill."""
    known = {c.file for c in CAPTURES} | {"probe.json", "meminfo.txt", "cpuinfo.txt", "lsblk.json", "pve/storage.cfg"}
    # VM configs saved alone (a capture of /etc/libvirt/qemu or /etc/pve/qemu-server) are facts too
    configs = [*directory.glob("qemu-server/*.conf"), *directory.glob("libvirt/*.xml")]
    if have_vm_configs or configs or any((directory / name).is_file() for name in known):
        return
    raise StackbenchError(
        f"{directory} holds no saved facts (none of the files `stackbench facts save` writes, such as "
        "probe.json, zpool-status.txt, meminfo.txt, libvirt/*.xml or qemu-server/*.conf), so there is nothing to audit",
        "Save them with `stackbench facts save DIR` on the machine, then `stackbench audit --from DIR`",
    )


def unchecked_areas(facts: Facts) -> list[str]:
    """The parts of the knowledge base that had no facts to look at, said next to an "OK"."""
    areas = [
        ("ZFS pools (no zpool output)", facts.pools),
        ("datasets (no zfs get output)", facts.datasets),
        ("ARC (no arcstats)", facts.arcstats),
        ("host memory and kernel (no meminfo)", facts.meminfo),
        ("VM disks (no VM configs)", facts.vms),
    ]
    return [name for name, value in areas if not value]
