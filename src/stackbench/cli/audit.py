"""`stackbench audit` and `stackbench facts save`: ZFS/KVM checks over saved facts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, out
from stackbench.cli.common import print_json
from stackbench.report.export import Tabular, to_rich

facts_app = typer.Typer(help="Gather the facts the audit reads (raw command outputs) into a directory.",
                        no_args_is_help=True)
app.add_typer(facts_app, name="facts")


@facts_app.command("save")
def facts_save(directory: Path = typer.Argument(..., help="Directory to write the raw outputs to.", show_default=False)) -> None:
    """Run zpool/zfs/zdb, read arcstats, module parameters, block queues, cpuinfo, meminfo and Proxmox VM
    configs, and save the raw outputs, so `stackbench audit --from DIR` can audit this machine elsewhere.

    Example:

        stackbench facts save /tmp/host-facts && stackbench audit --from /tmp/host-facts
    """
    from stackbench.audit.facts import save_facts

    for name, status in save_facts(directory).items():
        out.print(f"{name:<28} {status}", highlight=False)


@app.command("audit")
def audit_command(
    from_dir: Optional[Path] = typer.Option(None, "--from", help="Audit saved facts (stackbench facts save DIR)."),
    vm_config: Optional[list[Path]] = typer.Option(None, "--vm-config", help="Proxmox VM config files to include."),
    explain: Optional[str] = typer.Option(None, "--explain", help="Print one rule's documentation and exit."),
    list_rules: bool = typer.Option(False, "--list-rules", help="List every rule and exit."),
    json_output: bool = typer.Option(False, "--json", help="Print findings as JSON."),
) -> None:
    """Check ZFS pools, datasets and KVM/Proxmox VM configs against the knowledge base of tuning and
    safety rules; every finding has the evidence, the fix, and where a performance claim is made the
    stackbench command that would prove it on this machine. Exit 0: clean; 2: findings.

    Example:

        stackbench audit --from /tmp/host-facts --vm-config /etc/pve/qemu-server/100.conf
    """
    import tempfile

    from stackbench.audit.facts import load_facts, save_facts
    from stackbench.audit.rules import BY_ID, REGISTRY
    from stackbench.errors import StackbenchError

    if list_rules:
        rows = [[r.id, r.severity, r.status, r.title] for r in REGISTRY]
        if json_output:
            print_json({"rules": [{"id": r.id, "severity": r.severity, "status": r.status, "title": r.title,
                                   "source": r.source} for r in REGISTRY]})
        else:
            out.print(to_rich(Tabular(["id", "severity", "status", "title"], rows)))
        return
    if explain:
        rule = BY_ID.get(explain.upper())
        if rule is None:
            raise StackbenchError(f"no rule {explain!r}", "List the rules with `stackbench audit --list-rules`")
        out.print(f"{rule.id} ({rule.severity}, {rule.status}): {rule.title}\n\n{rule.doc.strip()}\n\n"
                  f"Why: {rule.rationale}\nFix: {rule.fix}\nSource: {rule.source}", highlight=False)
        return
    if from_dir is not None:
        if not from_dir.is_dir():
            raise StackbenchError(f"{from_dir} is not a directory of saved facts", "Create one with `stackbench facts save DIR`")
        facts = load_facts(from_dir, vm_config)
    else:
        with tempfile.TemporaryDirectory(prefix="stackbench-facts-") as tmp:
            save_facts(Path(tmp))
            facts = load_facts(Path(tmp), vm_config)
    findings = [f for rule in REGISTRY for f in rule.check(facts)]
    order = {"crit": 0, "err": 1, "warn": 2, "info": 3}
    findings.sort(key=lambda f: (order[f.severity], f.rule_id, f.subject))
    if json_output:
        print_json({"zfs_version": facts.zfs_version, "findings": [f.to_json() for f in findings]})
    elif findings:
        out.print(to_rich(Tabular(
            ["severity", "rule", "subject", "evidence", "fix"],
            [[f.severity, f.rule_id, f.subject, f.evidence, f.fix] for f in findings],
            title=f"{len(findings)} findings" + (f" ({facts.zfs_version})" if facts.zfs_version else ""),
            notes=[f"prove {f.rule_id} on {f.subject}: {f.prove}" for f in findings if f.prove]
            + ["Explain a rule: stackbench audit --explain RULE-ID"],
        )))
    else:
        out.print("OK! No findings.")
    if findings:
        sys.exit(2)
