"""`stackbench audit` and `stackbench facts save`: ZFS, KVM/Proxmox and guest checks over saved facts."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Optional

import typer


from stackbench.cli.app import EXIT_FINDINGS, app, fail, out, warn
from stackbench.cli.common import FormatOption, JsonOption, chosen_format, emit, print_json

facts_app = typer.Typer(help="Gather the facts the audit reads (raw command outputs) into a directory.",
                        no_args_is_help=True)
app.add_typer(facts_app, name="facts")


def save_into(directory: Path) -> dict[str, str]:
    """The probe, with its failures turned into one-line errors that name the fix."""
    import errno

    from stackbench.audit.probe import save_facts
    from stackbench.errors import StackbenchError

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
    from stackbench.errors import StackbenchError

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
) -> None:
    """Check ZFS pools, datasets, KVM/Proxmox and libvirt VM configs and the guest against the knowledge
    base of tuning and safety rules. Every finding has the evidence (the exact property and value), the fix,
    and where the rule makes a performance claim the stackbench commands that would prove it on this
    machine. Exit status: 0 no findings, 3 findings, 1 error or unreadable facts, 2 bad usage.

    Examples:

        stackbench audit

        stackbench audit --from /tmp/host-facts --vm-config /etc/pve/qemu-server/100.conf

        stackbench audit --explain ZP-ASHIFT-LOW
    """
    from stackbench.audit.facts import load_facts
    from stackbench.audit.report import run_rules
    from stackbench.audit.rule import SEVERITIES
    from stackbench.audit.rules import BY_ID, REGISTRY
    from stackbench.errors import StackbenchError
    from stackbench.report.audit import findings_table, render_findings, rules_table

    fmt = chosen_format(output_format, json_output)
    if min_severity not in SEVERITIES:
        raise StackbenchError(f"unknown --min-severity {min_severity!r}", f"Use one of: {', '.join(SEVERITIES)}")
    if list_rules:
        emit(fmt, rules_table(REGISTRY),
             {"rules": [{"id": r.id, "severity": r.severity, "status": r.status, "title": r.title,
                         "rationale": r.rationale, "fix": r.fix, "source": r.source} for r in REGISTRY]})
        return
    if explain:
        rule = BY_ID.get(explain.upper())
        if rule is None:
            raise StackbenchError(f"no rule {explain!r}", "List the rules with `stackbench audit --list-rules`")
        if fmt == "json":
            print_json({"id": rule.id, "severity": rule.severity, "status": rule.status, "title": rule.title,
                        "doc": rule.doc.strip(), "rationale": rule.rationale, "fix": rule.fix, "source": rule.source})
            return
        out.print(f"{rule.id} ({rule.severity}{', disputed' if rule.status == 'disputed' else ''}): {rule.title}\n\n"
                  f"{rule.doc.strip()}\n\nWhy: {rule.rationale}\nFix: {rule.fix}\nSource: {rule.source}", highlight=False)
        return
    for path in list(vm_config or []) + ([storage_cfg] if storage_cfg else []):
        if not path.is_file():
            raise StackbenchError(f"{path} is not a readable file", "Give the path of a VM config or storage.cfg")
    if from_dir is not None:
        if not from_dir.is_dir():
            raise StackbenchError(f"{from_dir} is not a directory of saved facts",
                                  "Create one with `stackbench facts save DIR`")
        _require_saved_facts(from_dir, bool(vm_config))
        facts = load_facts(from_dir, vm_config, storage_cfg)
    else:
        with tempfile.TemporaryDirectory(prefix="stackbench-facts-") as tmp:
            save_into(Path(tmp))
            facts = load_facts(Path(tmp), vm_config, storage_cfg)
    report = run_rules(facts, REGISTRY, min_severity)
    findings = report.findings
    version = f" on {facts.zfs_version}" if facts.zfs_version else ""
    title = f"{len(findings)} findings{version}"
    if fmt == "table" and findings:
        out.print(render_findings(findings, BY_ID, title))
    elif fmt == "json" or findings:
        emit(fmt, findings_table(findings, BY_ID, title), report.to_json(facts))
    for problem in report.problems:
        warn(f"{problem}; the facts it holds were not used")
    if findings:
        sys.exit(EXIT_FINDINGS)
    if report.problems:
        if fmt == "json":
            sys.exit(1)
        fail(f"no findings, but {len(report.problems)} fact file(s) could not be read, so the audit is incomplete. "
             "Re-capture them with `stackbench facts save DIR`, or report the format.")
    if fmt != "json":
        missing = unchecked_areas(facts)
        out.print(f"OK! No findings from {len(REGISTRY)} rules{version}.")
        if missing:
            out.print(f"Not checked, for lack of facts: {'; '.join(missing)}.")


def _require_saved_facts(directory: Path, have_vm_configs: bool) -> None:
    """Refuse a directory that holds none of the files `facts save` writes: no data is not a clean bill."""
    from stackbench.audit.probe import CAPTURES
    from stackbench.errors import StackbenchError

    known = {c.file for c in CAPTURES} | {"probe.json", "meminfo.txt", "cpuinfo.txt", "lsblk.json"}
    if have_vm_configs or any((directory / name).is_file() for name in known):
        return
    raise StackbenchError(
        f"{directory} holds no saved facts (none of the files `stackbench facts save` writes, such as "
        "probe.json, zpool-status.txt or meminfo.txt), so there is nothing to audit",
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
