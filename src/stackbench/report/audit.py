"""What `stackbench audit` shows: the rule list, and findings as blocks (the terminal) or as a table (the other
formats), built from the findings and rules the audit produced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from stackbench.base.units import count
from stackbench.report.tabular import Tabular

if TYPE_CHECKING:
    from rich.console import RenderableType

    from stackbench.audit.rule import Finding, Rule, RuleText

SEVERITY_STYLE = {"crit": "bold red", "err": "red", "warn": "yellow", "info": "cyan"}
EXPLAIN_HINT = "Explain a rule: stackbench audit --explain RULE-ID"
SHOWN_DISKS = 6  # evidence lines of a VM finding's disks in the terminal


def rules_table(rules: Sequence[Rule]) -> Tabular:
    return Tabular(["id", "severity", "status", "title"], [[r.id, r.severity, r.status, r.title] for r in rules],
                   notes=[f"{count(len(rules), 'rule')}; explain one with: stackbench audit --explain RULE-ID"])


def findings_table(findings: Sequence[Finding], rules: Mapping[str, Rule | RuleText], title: str,
                   marks: Sequence[str] | None = None) -> Tabular:
    """One row per finding with its rule's why and source: for markdown, csv and json, where rows are the unit.
    With `marks` (a stored audit compared with the previous one) a last column says `new` or `still`."""
    rows = [[f.severity, f.rule_id, f.subject, f.evidence, rules[f.rule_id].rationale, f.fix, f.prove or "",
             rules[f.rule_id].source] for f in findings]
    headers = ["severity", "rule", "subject", "evidence", "why", "fix", "prove", "source"]
    if marks is not None:
        headers.append("change")
        rows = [row + [mark] for row, mark in zip(rows, marks)]
    return Tabular(headers, rows, title=title, notes=[EXPLAIN_HINT])


def changes_heading(changes: Mapping[str, Any]) -> str:
    when = str(changes.get("previous_created_at") or "")[:16].replace("T", " ")
    return f"Since the audit of {when} UTC ({str(changes.get('previous_audit_id') or '')[:12]})"


def changes_table(changes: Mapping[str, Any]) -> Tabular:
    """The findings of the previous audit that are gone: fixed, or not rechecked (with why)."""
    rows = [["fixed", f["severity"], f["rule"], f["subject"], f["evidence"], ""] for f in changes["fixed"]]
    rows += [["not rechecked", f["severity"], f["rule"], f["subject"], f["evidence"], f["why"]]
             for f in changes["not_rechecked"]]
    return Tabular(["change", "severity", "rule", "subject", "previous evidence", "why not rechecked"], rows,
                   title=f"{changes_heading(changes)}: {len(changes['fixed'])} fixed, {len(changes['new'])} new, "
                         f"{len(changes['not_rechecked'])} not rechecked")


def render_changes(changes: Mapping[str, Any]) -> RenderableType:
    """The terminal's lines for what changed since the previous audit of the same subject."""
    from rich.console import Group
    from rich.text import Text

    head = Text(f"{changes_heading(changes)}: ", style="bold")
    head.append(f"{len(changes['fixed'])} fixed", style="green" if changes["fixed"] else "")
    head.append(f", {len(changes['new'])} new", style="yellow" if changes["new"] else "")
    if changes["not_rechecked"]:
        head.append(f", {len(changes['not_rechecked'])} not rechecked", style="magenta")
    lines: list[RenderableType] = [head]
    for f in changes["fixed"]:
        line = Text("  fixed         ", style="green")
        line.append(f"{f['rule']}  {f['subject']}")
        lines.append(line)
    for f in changes["not_rechecked"]:
        line = Text("  not rechecked ", style="magenta")
        line.append(f"{f['rule']}  {f['subject']}: {f['why']}")
        lines.append(line)
    return Group(*lines)


def disk_lines(finding: Finding) -> list[str]:
    """A VM finding's disks, one evidence line each, cut after SHOWN_DISKS: a VM with thirty disks on one
    controller stays one readable block, and --json keeps every disk."""
    lines = [disk.evidence for disk in finding.disks[:SHOWN_DISKS]]
    if len(finding.disks) > SHOWN_DISKS:
        lines.append(f"... and {len(finding.disks) - SHOWN_DISKS} more disks (--json lists each with its own fix)")
    return lines


def render_findings(findings: Sequence[Finding], rules: Mapping[str, Rule | RuleText], title: str,
                    marks: Sequence[str] | None = None) -> RenderableType:
    """One block per finding (ruff's shape): the evidence, fix and proof are sentences, too long for columns.
    With `marks`, a finding the previous audit of the subject did not have is marked NEW."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = [Text(title, style="bold")]
    for index, finding in enumerate(findings):
        rule = rules[finding.rule_id]
        head = Text()
        head.append(f"{finding.severity:<5}", style=SEVERITY_STYLE.get(finding.severity, ""))
        head.append(f" {finding.rule_id}", style="bold")
        if rule.status == "disputed":
            head.append(" (disputed)", style="magenta")
        if marks is not None and marks[index] == "new":
            head.append(" NEW", style="bold yellow")
        head.append(f"  {finding.subject}")
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=15, justify="right", style="dim")
        grid.add_column(ratio=1, overflow="fold")
        if len(finding.disks) > 1:
            grid.add_row("evidence:", "\n".join(disk_lines(finding)))
        else:
            grid.add_row("evidence:", finding.evidence)
        grid.add_row("why:", rule.rationale)
        grid.add_row("fix:", finding.fix)
        if finding.prove:
            grid.add_row("prove:", Text(finding.prove, style="dim"))
        grid.add_row("source:", Text(rule.source, style="dim"))
        parts += [head, grid]
    parts.append(Text(EXPLAIN_HINT, style="dim"))
    return Group(*parts)


@dataclass(frozen=True)
class AuditDocument:
    """An audit's JSON document (`audit --json`, fresh or stored, possibly redacted) read back into what the
    readers show: the findings with their rules, the new/still marks when compared with the previous
    audit, the changes, and the title."""

    findings: list[Finding]
    rules: dict[str, RuleText]
    marks: list[str] | None
    changes: Mapping[str, Any] | None
    version: str  # " on <zfs version>" or ""
    rules_checked: int

    @property
    def title(self) -> str:
        return f"{count(len(self.findings), 'finding')}{self.version}"

    @classmethod
    def read(cls, document: Mapping[str, Any]) -> "AuditDocument":
        """ValueError, KeyError or TypeError when the document is damaged."""
        from stackbench.audit.rule import finding_from_json

        pairs = [finding_from_json(f) for f in document["findings"]]
        changes = document.get("changes")
        return cls(
            findings=[finding for finding, _ in pairs],
            rules={rule.id: rule for _, rule in pairs},
            marks=[f.get("change") or "" for f in document["findings"]] if changes else None,
            changes=changes,
            version=f" on {document['zfs_version']}" if document.get("zfs_version") else "",
            rules_checked=document.get("rules_checked", 0),
        )


def stored_audit_tables(document: Mapping[str, Any]) -> tuple[list[Tabular], list[str]]:
    """A stored audit's document as the tables every reader shows (the report's documents and the server's
    page): the findings, marked new or still when compared, and what the previous audit of the subject had
    that is gone (fixed, or not rechecked); a note when there is no finding. ValueError, KeyError or
    TypeError when the document is damaged."""
    audit = AuditDocument.read(document)
    tables = [findings_table(audit.findings, audit.rules, audit.title, audit.marks)] if audit.findings else []
    if audit.changes:
        tables.append(changes_table(audit.changes))
    notes = [] if audit.findings else [f"No findings from {count(audit.rules_checked, 'rule')}{audit.version}."]
    return tables, notes
