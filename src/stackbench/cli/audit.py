"""`stackbench audit` and `stackbench facts save`: ZFS, KVM/Proxmox and guest checks over saved facts."""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

import typer


from stackbench.cli.app import EXIT_FINDINGS, app, err, fail, out, warn
from stackbench.cli.common import (
    FormatOption, JsonOption, StoreIntoOption, check_label, chosen_format, emit, emit_report, open_store_from,
    print_json, say_stored,
)
from stackbench.base.units import count

facts_app = typer.Typer(help="Gather the facts the audit reads (raw command outputs) into a directory.",
                        no_args_is_help=True)
app.add_typer(facts_app, name="facts")


def save_into(directory: Path) -> dict[str, str]:
    """The probe, with its failures turned into one-line errors that name the fix."""
    import errno

    from stackbench.audit.probe import save_facts
    from stackbench.base.errors import StackbenchError

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


@facts_app.command("save")
def facts_save(
    directory: Path = typer.Argument(..., help="Directory to write the raw outputs to (created if missing).",
                                     show_default=False),
    json_output: bool = typer.Option(False, "--json", help="Print file -> status as JSON."),
) -> None:
    """Run zpool/zfs/zdb, read arcstats, module parameters, block queues, lsblk, device links, NVMe formats,
    mounts, swaps, NUMA nodes, cpuinfo, meminfo and the kernel command line, copy Proxmox VM configs,
    storage.cfg and libvirt domain XML, and save the raw outputs with a manifest (probe.json), so
    `stackbench audit --from DIR` can audit this machine anywhere. Read-only: nothing outside DIR is written.

    Example:

        stackbench facts save /tmp/host-facts && stackbench audit --from /tmp/host-facts
    """
    from stackbench.base.errors import StackbenchError

    if directory.exists() and not directory.is_dir():
        raise StackbenchError(f"{directory} exists and is not a directory", "Give a new or existing directory")
    status = save_into(directory)
    if json_output:
        print_json(status)
        return
    saved = sum(1 for s in status.values() if s.startswith("saved"))
    for name, state in status.items():
        out.print(f"  {'✓' if state.startswith('saved') else '·'} {name:<28} {state}", highlight=False)
    out.print(f"{saved} of {len(status)} facts saved to {directory}", highlight=False)


@app.command("audit")
def audit_command(
    from_dir: Optional[Path] = typer.Option(None, "--from", help="Audit saved facts (from `stackbench facts save DIR`) "
                                            "instead of this machine."),
    vm_config: Optional[list[Path]] = typer.Option(None, "--vm-config", help="Proxmox VM config (.conf) or libvirt "
                                                   "domain XML (.xml) to include; repeatable."),
    storage_cfg: Optional[Path] = typer.Option(None, "--storage-cfg", help="Proxmox storage.cfg, to map VM disks "
                                               "to datasets (default: the one in the facts)."),
    min_severity: str = typer.Option("info", "--min-severity", help="Hide findings below: crit, err, warn or info."),
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
    explain: Optional[str] = typer.Option(None, "--explain", help="Print one rule's documentation and exit."),
    list_rules: bool = typer.Option(False, "--list-rules", help="List every rule and exit."),
    db: Optional[str] = StoreIntoOption,
    label: Optional[str] = typer.Option(
        None, "--label", "-l", help="A name for the stored audit, usable wherever its id is (needs --db).",
        callback=check_label,
    ),
) -> None:
    """Check ZFS pools, datasets, KVM/Proxmox and libvirt VM configs and the guest against the knowledge
    base of tuning and safety rules. Every finding has the evidence (the exact property and value), the fix,
    and where the rule makes a performance claim the stackbench commands that would prove it on this
    machine. Exit status: 0 no findings, 3 findings, 1 error or unreadable facts, 2 bad usage.

    Examples:

        stackbench audit

        stackbench audit --from /tmp/host-facts --vm-config /etc/pve/qemu-server/100.conf

        stackbench audit --explain ZP-ASHIFT-LOW

        stackbench audit --db ~/.local/share/stackbench/results.db   # stored; the next one says what was fixed
    """
    from stackbench.audit.rule import SEVERITIES
    from stackbench.base.errors import StackbenchError

    fmt = chosen_format(output_format, json_output)
    if min_severity not in SEVERITIES:
        raise StackbenchError(f"unknown --min-severity {min_severity!r}", f"Use one of: {', '.join(SEVERITIES)}")
    if list_rules or explain:
        _print_rules(explain, fmt)
        return
    for path in list(vm_config or []) + ([storage_cfg] if storage_cfg else []):
        if not path.is_file():
            raise StackbenchError(f"{path} is not a readable file", "Give the path of a VM config or storage.cfg")
    if label is not None and db is None:
        raise StackbenchError("--label names a stored audit, and nothing is stored without --db",
                              "Add --db URL (e.g. --db ~/.local/share/stackbench/results.db), or leave out --label")
    store = open_store_from(db) if db is not None else None  # a bad --db fails before the facts are gathered
    facts, subject = _gather(from_dir, vm_config, storage_cfg)
    audited = _audited(facts, subject, min_severity=min_severity, store=store, label=label)
    if store is not None:
        _store(store, audited, facts=facts, subject=subject, label=label, fmt=fmt)
    print_audit(audited.document, fmt)
    audit_id = audited.document["audit_id"]
    if audit_id is not None and fmt != "json":
        err.print(f"Stored as audit {audit_id[:12]}: see it again with `stackbench show {audit_id[:12]}`",
                  highlight=False, markup=False)
        if subject.key is None:
            warn("the facts do not say which machine they are from (no machine-id-hash.txt and no host name in "
                 "probe.json), so this audit is compared with no earlier one; capture with `stackbench facts save` "
                 "to get them")
    if audited.report.findings:
        sys.exit(EXIT_FINDINGS)
    if audited.report.problems:  # with --json too: the document is on stdout, the one error line on stderr
        fail(f"no findings, but {count(len(audited.report.problems), 'fact file')} could not be read, so the audit "
             "is incomplete. Re-capture them with `stackbench facts save DIR`, or report the format.")


def _print_rules(explain: Optional[str], fmt: str) -> None:
    """--list-rules, or --explain RULE: the knowledge base itself, nothing audited."""
    from stackbench.audit.rules import BY_ID, REGISTRY
    from stackbench.base.errors import StackbenchError
    from stackbench.report.audit import rules_table

    if not explain:
        emit(fmt, rules_table(REGISTRY),
             {"rules": [{"id": r.id, "severity": r.severity, "status": r.status, "title": r.title,
                         "rationale": r.rationale, "fix": r.fix, "source": r.source} for r in REGISTRY]})
        return
    rule = BY_ID.get(explain.upper())
    if rule is None:
        raise StackbenchError(f"no rule {explain!r}", "List the rules with `stackbench audit --list-rules`")
    if fmt == "json":
        print_json({"id": rule.id, "severity": rule.severity, "status": rule.status, "title": rule.title,
                    "doc": rule.doc.strip(), "rationale": rule.rationale, "fix": rule.fix, "source": rule.source})
        return
    out.print(f"{rule.id} ({rule.severity}{', disputed' if rule.status == 'disputed' else ''}): {rule.title}\n\n"
              f"{rule.doc.strip()}\n\nWhy: {rule.rationale}\nFix: {rule.fix}\nSource: {rule.source}", highlight=False)


def _gather(from_dir: Optional[Path], vm_config: Optional[list[Path]], storage_cfg: Optional[Path]) -> tuple[Any, Any]:
    """The facts (saved ones with --from, else this machine's, probed into a temporary directory) and the
    subject they are about."""
    from stackbench.audit.facts import load_facts
    from stackbench.audit.subject import audit_subject
    from stackbench.base.errors import StackbenchError

    if from_dir is not None:
        if not from_dir.is_dir():
            raise StackbenchError(f"{from_dir} is not a directory of saved facts",
                                  "Create one with `stackbench facts save DIR`")
        _require_saved_facts(from_dir, bool(vm_config))
        facts = load_facts(from_dir, vm_config, storage_cfg)
        return facts, audit_subject(from_dir, facts, captured_here=False, vm_configs=vm_config,
                                    unchecked=unchecked_areas(facts))
    with tempfile.TemporaryDirectory(prefix="stackbench-facts-") as tmp:
        save_into(Path(tmp))
        facts = load_facts(Path(tmp), vm_config, storage_cfg)
        return facts, audit_subject(Path(tmp), facts, captured_here=True, vm_configs=vm_config,
                                    unchecked=unchecked_areas(facts))


@dataclass(frozen=True)
class _Audited:
    report: Any  # AuditReport: the findings shown (at or above --min-severity) and the unreadable facts
    document: dict[str, Any]  # what `audit --json` prints and the store keeps
    findings: list[dict[str, Any]]  # every finding, whatever --min-severity: the record
    previous: Any  # the previous stored audit of the subject, or None
    created: datetime


def _audited(facts: Any, subject: Any, *, min_severity: str, store: Any, label: Optional[str]) -> _Audited:
    """Every rule run over the facts, compared with the previous stored audit of the same subject; the
    record keeps every finding, --min-severity filters what is shown."""
    from stackbench.audit.history import compare_audits
    from stackbench.audit.report import ORDER, AuditReport, run_rules
    from stackbench.audit.rules import REGISTRY
    from stackbench.model.results import new_id

    def shown(severity: str) -> bool:
        return ORDER[severity] <= ORDER[min_severity]

    everything = run_rules(facts, REGISTRY)
    report = AuditReport([f for f in everything.findings if shown(f.severity)], everything.problems)
    document = report.to_json(facts)
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
    created = datetime.now(timezone.utc)
    document.update({
        "audit_id": new_id() if store is not None else None, "label": label, "created_at": created.isoformat(),
        "subject": {"key": subject.key, "name": subject.name, "source": subject.source, "detail": subject.detail},
        "facts": subject.facts, "min_severity": min_severity, "rules_checked": len(REGISTRY), "changes": changes,
    })
    return _Audited(report, document, all_findings, previous, created)


def _store(store: Any, audited: _Audited, *, facts: Any, subject: Any, label: Optional[str], fmt: str) -> None:
    """Keep the audit; if the store refuses it, the audit is still shown, then the store's error."""
    from stackbench.base.errors import StackbenchError

    document, previous = audited.document, audited.previous
    say_stored(store, "audit", document["audit_id"], "audit")
    try:
        store.add_audit(
            audit_id=document["audit_id"], label=label, created_at=audited.created, subject_key=subject.key,
            subject_name=subject.name, source=subject.source, source_detail=subject.detail,
            zfs_version=facts.zfs_version, previous_id=previous.id if previous else None, facts=subject.facts,
            document=document, findings=audited.findings,
        )
    except StackbenchError:
        document["audit_id"] = None
        print_audit(document, fmt)
        raise


def print_audit(document: dict[str, Any], fmt: str) -> None:
    """An audit as `audit` prints it, from its JSON document: the same function shows a fresh audit and a
    stored one (`show AUDIT`), so both print the same bytes. Raises ValueError for a damaged document.

    What changed since the previous audit of the subject is said once: on the terminal as lines under the
    findings (or under "OK!"), elsewhere as a table of what is gone when anything is, else as its summary
    line (issue 33: a second `audit --db` of a clean machine printed two empty tables and the summary twice)."""
    from stackbench.report.audit import (
        AuditDocument, changes_heading, changes_table, findings_table, render_changes, render_findings,
    )
    from stackbench.report.document import Report

    audit = AuditDocument.read(document)
    findings, changes = audit.findings, audit.changes
    gone = bool(changes and (changes["fixed"] or changes["not_rechecked"]))
    if fmt == "table" and findings:
        out.print(render_findings(findings, audit.rules, audit.title, audit.marks))
    elif fmt == "json" or (fmt != "table" and (findings or gone)):
        tables = [findings_table(findings, audit.rules, audit.title, audit.marks)] if findings or fmt == "json" else []
        emit_report(fmt, Report(tables=tuple(tables + ([changes_table(changes)] if gone else [])), data=document))
    for problem in document.get("problems") or []:
        warn(f"{problem}; the facts it holds were not used")
    if fmt == "json":
        return
    if not findings and not document.get("problems"):
        missing = (document.get("facts") or {}).get("unchecked") or []
        out.print(f"OK! No findings from {count(audit.rules_checked, 'rule')}{audit.version}.")
        if missing:
            out.print(f"Not checked, for lack of facts: {'; '.join(missing)}.")
    if changes and fmt == "table":
        out.print(render_changes(changes))
    elif changes and fmt == "markdown" and not gone:
        out.print(f"\n{changes_heading(changes)}: {count(len(changes['new']), 'new finding')}, none fixed.")


def show_audit(stored: Any, fmt: str) -> None:
    """`stackbench show AUDIT`: a stored audit (a `StoredAudit`) printed as `audit` printed it."""
    from stackbench.base.errors import StoreError

    try:
        print_audit(stored.document, fmt)
    except (ValueError, KeyError, TypeError) as error:
        raise StoreError(
            f"the stored audit {stored.id[:12]} is damaged and cannot be shown ({type(error).__name__}: {error})",
            f"Delete it with `stackbench rm {stored.id[:12]} --yes` and audit again",
        ) from None


def _require_saved_facts(directory: Path, have_vm_configs: bool) -> None:
    """Refuse a directory that holds none of the files `facts save` writes: no data is not a clean bill."""
    from stackbench.audit.probe import CAPTURES
    from stackbench.base.errors import StackbenchError

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


def unchecked_areas(facts: object) -> list[str]:
    """The parts of the knowledge base that had no facts to look at, said next to an "OK"."""
    areas = [
        ("ZFS pools (no zpool output)", getattr(facts, "pools", None)),
        ("datasets (no zfs get output)", getattr(facts, "datasets", None)),
        ("ARC (no arcstats)", getattr(facts, "arcstats", None)),
        ("host memory and kernel (no meminfo)", getattr(facts, "meminfo", None)),
        ("VM disks (no VM configs)", getattr(facts, "vms", None)),
    ]
    return [name for name, value in areas if not value]
