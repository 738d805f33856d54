"""`stackbench audit` and `stackbench facts save`: ZFS, KVM/Proxmox and guest checks over saved facts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer


from stackbench.cli.app import EXIT_FINDINGS, app, err, out, warn
from stackbench.cli.common import (
    FormatOption, JsonOption, StoreIntoOption, check_label, chosen_format, emit, emit_report, open_store_from,
    print_json, say_stored,
)
from stackbench.base.units import count

facts_app = typer.Typer(help="Gather the facts the audit reads (raw command outputs) into a directory.",
                        no_args_is_help=True)
app.add_typer(facts_app, name="facts")


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
    from stackbench.audit.service import save_into
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
    from stackbench.audit import service
    from stackbench.audit.rule import SEVERITIES
    from stackbench.base.errors import StackbenchError

    fmt = chosen_format(output_format, json_output)
    if min_severity not in SEVERITIES:
        raise StackbenchError(f"unknown --min-severity {min_severity!r}", f"Use one of: {', '.join(SEVERITIES)}")
    if list_rules:
        print_rules(fmt)
        return
    if explain:
        print_rule(explain, fmt)
        return
    for path in list(vm_config or []) + ([storage_cfg] if storage_cfg else []):
        if not path.is_file():
            raise StackbenchError(f"{path} is not a readable file", "Give the path of a VM config or storage.cfg")
    if label is not None and db is None:
        raise StackbenchError("--label names a stored audit, and nothing is stored without --db",
                              "Add --db URL (e.g. --db ~/.local/share/stackbench/results.db), or leave out --label")
    store = open_store_from(db) if db is not None else None  # a bad --db fails before the facts are gathered
    facts, subject = service.gather_facts(from_dir, vm_config, storage_cfg)
    audit = service.assemble(facts, subject, min_severity=min_severity, label=label, store=store)
    failure = None
    if store is not None and audit.id is not None:
        say_stored(store, "audit", audit.id, "audit")
        failure = service.keep(store, audit)
    print_audit(audit.document, fmt)  # the audit is shown even when storing it failed; then the error, one line
    if failure is not None:
        raise failure
    if audit.id is not None and fmt != "json":
        err.print(f"Stored as audit {audit.id[:12]}: see it again with `stackbench show {audit.id[:12]}`",
                  highlight=False, markup=False)
        if subject.key is None:
            warn("the facts do not say which machine they are from (no machine-id-hash.txt and no host name in "
                 "probe.json), so this audit is compared with no earlier one; capture with `stackbench facts save` "
                 "to get them")
    if audit.shown.findings:
        sys.exit(EXIT_FINDINGS)
    if audit.shown.problems:  # with --json too: the document is on stdout, the one error line on stderr
        raise StackbenchError(f"no findings, but {count(len(audit.shown.problems), 'fact file')} could not be read, "
                              "so the audit is incomplete", "Re-capture them with `stackbench facts save DIR`, or "
                              "report the format")


def print_rules(fmt: str) -> None:
    """`audit --list-rules`: every rule of the knowledge base."""
    from stackbench.audit.rules import REGISTRY
    from stackbench.report.audit import rules_table

    emit(fmt, rules_table(REGISTRY),
         {"rules": [{"id": r.id, "severity": r.severity, "status": r.status, "title": r.title,
                     "rationale": r.rationale, "fix": r.fix, "source": r.source} for r in REGISTRY]})


def print_rule(rule_id: str, fmt: str) -> None:
    """`audit --explain RULE`: one rule's documentation."""
    from stackbench.audit.rules import BY_ID
    from stackbench.base.errors import StackbenchError

    rule = BY_ID.get(rule_id.upper())
    if rule is None:
        raise StackbenchError(f"no rule {rule_id!r}", "List the rules with `stackbench audit --list-rules`")
    if fmt == "json":
        print_json({"id": rule.id, "severity": rule.severity, "status": rule.status, "title": rule.title,
                    "doc": rule.doc.strip(), "rationale": rule.rationale, "fix": rule.fix, "source": rule.source})
        return
    out.print(f"{rule.id} ({rule.severity}{', disputed' if rule.status == 'disputed' else ''}): {rule.title}\n\n"
              f"{rule.doc.strip()}\n\nWhy: {rule.rationale}\nFix: {rule.fix}\nSource: {rule.source}", highlight=False)


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
