"""What changed since the previous stored audit of the same subject: findings fixed, new, still there.

A finding is the same finding in two audits when its rule and what it is about agree: the VM config for a
VM finding (its subject text lists the disks, which change when one disk is fixed), else its subject (a
pool, dataset, vdev, the host). Disks are compared inside a VM finding, so fixing one of three disks is
reported as that disk fixed while the finding stays.

A finding that is gone is called fixed only when this audit looked at the same things: when its VM config
is missing this time, or a fact file the previous audit read is missing now, it is "not rechecked" instead,
with the reason, because a finding that vanished for lack of facts was not fixed.

Both sides are the findings' JSON (`Finding.to_json()`, as stored), and the result is JSON (docs/json.md).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from stackbench.audit.rule import SEVERITIES


def finding_key(finding: Mapping[str, Any], vm_keys: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(rule, what it is about). `vm_keys` maps a VM config's name to the VM's identity (audit.subject.vm_key),
    so the same VM read from another path (/etc/pve/qemu-server/100.conf, a copy named 100-old.conf) is the
    same VM."""
    vm = finding.get("vm")
    if vm:
        return finding["rule"], (vm_keys or {}).get(vm, vm)
    return finding["rule"], finding["subject"]


def _disk_names(finding: Mapping[str, Any]) -> list[str]:
    return [d["disk"] for d in finding.get("disks") or [] if isinstance(d, Mapping) and "disk" in d]


def _entry(finding: Mapping[str, Any], disks: Sequence[str] | None = None) -> dict[str, Any]:
    """A finding as a line of the changes; with `disks`, only those disks of a VM finding (their own
    severity and evidence)."""
    if disks is None:
        return {"rule": finding["rule"], "severity": finding["severity"], "subject": finding["subject"],
                "vm": finding.get("vm"), "disks": _disk_names(finding), "evidence": finding["evidence"],
                "fix": finding["fix"]}
    details = [d for d in finding.get("disks") or [] if d.get("disk") in disks]
    severity = min((d["severity"] for d in details), key=SEVERITIES.index, default=finding["severity"])
    return {"rule": finding["rule"], "severity": severity, "subject": f"{finding.get('vm')} {', '.join(disks)}",
            "vm": finding.get("vm"), "disks": list(disks), "evidence": "; ".join(d["evidence"] for d in details),
            "fix": "; ".join(d["fix"] for d in details)}


def compare_audits(
    previous: Mapping[str, Any], previous_findings: Sequence[Mapping[str, Any]],
    current_findings: Sequence[Mapping[str, Any]], current_facts: Mapping[str, Any],
) -> tuple[dict[str, Any], list[str]]:
    """(changes, the change of each current finding: `new` or `still`).

    `previous` holds the previous audit's `audit_id`, `created_at` and `facts` summary (audit.subject)."""
    previous_facts = previous.get("facts") or {}
    keys_before, keys_now = previous_facts.get("vm_keys") or {}, current_facts.get("vm_keys") or {}
    before = {finding_key(f, keys_before): f for f in previous_findings}
    current_keys = [finding_key(f, keys_now) for f in current_findings]
    now = set(current_keys)
    missing_files = sorted(set(previous_facts.get("files") or []) - set(current_facts.get("files") or []))
    vms_now = set(keys_now.values()) | set(current_facts.get("vms") or [])
    fixed: list[dict[str, Any]] = []
    not_rechecked: list[dict[str, Any]] = []
    for key, finding in before.items():
        if key in now:
            continue
        if finding.get("vm") and key[1] not in vms_now:
            not_rechecked.append({**_entry(finding), "why": f"{finding['vm']} is not in this audit's facts"})
        elif missing_files:
            not_rechecked.append({**_entry(finding), "why": "facts the previous audit read are missing now: "
                                  + ", ".join(missing_files[:5]) + (" ..." if len(missing_files) > 5 else "")})
        else:
            fixed.append(_entry(finding))
    for finding, key in zip(current_findings, current_keys):  # disks fixed inside a VM finding still there
        old = before.get(key)
        if old is not None:
            gone = [d for d in _disk_names(old) if d not in _disk_names(finding)]
            if gone:
                fixed.append(_entry(old, gone))
    marks = ["still" if key in before else "new" for key in current_keys]
    changes = {
        "previous_audit_id": previous.get("audit_id"),
        "previous_created_at": previous.get("created_at"),
        "fixed": fixed,
        "new": [{"rule": f["rule"], "severity": f["severity"], "subject": f["subject"]}
                for f, mark in zip(current_findings, marks) if mark == "new"],
        "not_rechecked": not_rechecked,
    }
    return changes, marks
