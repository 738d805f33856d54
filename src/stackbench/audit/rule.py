"""Rules and findings as data, in ruff's shape: a rule is a record (id, title, severity, rationale, fix, source,
check) and every finding is made by its rule, so a rule's id and severity are written once, in its `Rule(...)`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from stackbench.audit.facts import Facts

SEVERITIES = ("crit", "err", "warn", "info")
SUBJECT_DISKS = 4  # a finding's subject names this many of its VM's disks, then "and N more"

# A rule's example: saved facts as `stackbench facts save` writes them, file name -> text (`qemu-server/100.conf`
# for a VM config). Read with the real loader (`audit.examples.facts_of`), so an example is also a capture.
Example = Mapping[str, str]


@dataclass(frozen=True)
class DiskDetail:
    """One VM disk inside a finding about a VM: its own severity, evidence and fix (the disk alone)."""

    disk: str  # scsi0, virtio1 (Proxmox) or the libvirt target dev (vda)
    severity: str
    evidence: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {"disk": self.disk, "severity": self.severity, "evidence": self.evidence, "fix": self.fix}


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: str
    subject: str  # what the finding is about: a pool, dataset, vdev, VM, or a VM's disks
    evidence: str  # the exact property and value that triggered it
    fix: str  # the command that fixes it
    prove: str | None = None  # the stackbench command that would measure the claim on this machine
    vm: str | None = None  # the VM config it is about (qemu-server/100.conf, libvirt/web.xml), if any
    disks: tuple[DiskDetail, ...] = ()  # the VM's disks it covers, each with its own evidence and fix

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule_id,
            "severity": self.severity,
            "subject": self.subject,
            "evidence": self.evidence,
            "fix": self.fix,
            "prove": self.prove,
            "vm": self.vm,
            "disks": [disk.to_json() for disk in self.disks],
        }


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One rule, everything said of it in one record: `--list-rules`, `--explain`, findings, docs/audit.md's
    table of rules (generated from it) and its own examples, which tests/audit/test_audit_rules_examples.py
    runs. A new rule is one module under audit/rules/ and its name in `MODULES` there."""

    id: str
    title: str
    checks: str  # what it looks for, in one line (the docs' table of rules)
    severity: str  # what its findings have, unless a case is one of `other_severities`
    rationale: str
    fix: str
    source: str
    check: Callable[[Facts], Iterable[Finding]] = field(repr=False, compare=False)
    status: str = "stable"  # stable | disputed
    doc: str = ""
    # Severities some of its findings have instead, by case (KVM-CACHE: cache=unsafe loses flushes, so crit);
    # declared here so the rule's record says every severity it can report, and `finding` refuses any other.
    other_severities: frozenset[str] = frozenset()
    failing: tuple[Example, ...] = field(default=(), repr=False, compare=False)  # facts it must report
    passing: tuple[Example, ...] = field(default=(), repr=False, compare=False)  # facts it must not

    @property
    def severities(self) -> tuple[str, ...]:
        """Its own severity, then the others its cases may have, most severe first."""
        return (self.severity, *sorted(self.other_severities, key=SEVERITIES.index))

    def __post_init__(self) -> None:
        for severity in (self.severity, *self.other_severities):
            if severity not in SEVERITIES:
                raise ValueError(f"{self.id}: unknown severity {severity}")
        if self.severity in self.other_severities:
            raise ValueError(f"{self.id}: {self.severity} is the rule's own severity, not another one")

    def finding(self, subject: str, evidence: str, fix: str, prove: str | None = None, *,
                severity: str | None = None, vm: str | None = None) -> Finding:
        """A finding of this rule: the id and severity come from the rule, so a check cannot misspell them.

        `severity` is only for the cases the rule declares in `other_severities`; an undeclared one raises,
        because a finding whose severity the rule list does not show would surprise `--min-severity`.
        """
        return Finding(self.id, self._declared(severity), subject, evidence, fix, prove=prove, vm=vm)

    def vm_finding(self, vm: str, disks: Sequence[DiskDetail], fix: str, prove: str | None = None) -> Finding:
        """One finding for all of a VM's disks this rule reports: fourteen disks on one emulated controller are
        one problem with one fix, not fourteen. The subject names the disks, the evidence joins theirs, the
        severity is the most severe disk's, and each disk's own evidence and fix stay in `disks` (JSON)."""
        if not disks:
            raise ValueError(f"{self.id}: a VM finding needs at least one disk")
        for disk in disks:
            self._declared(disk.severity)
        severity = min((disk.severity for disk in disks), key=SEVERITIES.index)
        names = [disk.disk for disk in disks]
        shown = ", ".join(names) if len(names) <= SUBJECT_DISKS else \
            f"{', '.join(names[:SUBJECT_DISKS - 1])} and {len(names) - SUBJECT_DISKS + 1} more"
        evidence = "; ".join(disk.evidence for disk in disks)
        return Finding(self.id, severity, f"{vm} {shown}", evidence, fix, prove=prove, vm=vm, disks=tuple(disks))

    def _declared(self, severity: str | None) -> str:
        if severity is not None and severity != self.severity and severity not in self.other_severities:
            raise ValueError(f"{self.id}: severity {severity} is not declared in other_severities")
        return severity or self.severity


@dataclass(frozen=True)
class RuleText:
    """What a report shows of a rule (its title, why, source, status), as a stored audit recorded it: a
    stored audit is shown with the rule texts it was made with, even after a rule is reworded or removed."""

    id: str
    title: str
    rationale: str
    source: str
    status: str = "stable"


def finding_from_json(data: Any) -> tuple[Finding, RuleText]:
    """A finding of `audit --json` (with its rule's title, why, source and status) read back; ValueError
    when it is not one (a stored audit that was damaged)."""
    if not isinstance(data, Mapping):
        raise ValueError("a finding is not an object")
    try:
        texts = {k: data[k] for k in ("rule", "severity", "subject", "evidence", "fix")}
        if not all(isinstance(v, str) for v in texts.values()) or texts["severity"] not in SEVERITIES:
            raise ValueError(f"finding {texts.get('rule')!r} has a field that is not text or an unknown severity")
        disks = tuple(DiskDetail(d["disk"], d["severity"], d["evidence"], d["fix"]) for d in data.get("disks") or ())
        finding = Finding(texts["rule"], texts["severity"], texts["subject"], texts["evidence"], texts["fix"],
                          prove=data.get("prove"), vm=data.get("vm"), disks=disks)
        rule = RuleText(texts["rule"], str(data.get("title") or ""), str(data.get("why") or ""),
                        str(data.get("source") or ""), str(data.get("status") or "stable"))
    except (KeyError, TypeError) as error:
        raise ValueError(f"a finding lacks {error}") from None
    return finding, rule
