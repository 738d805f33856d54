"""Rules and findings as data, in ruff's shape: a rule is a record (id, title, severity, rationale, fix, source,
check) and every finding is made by its rule, so a rule's id and severity are written once, in its `Rule(...)`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

if TYPE_CHECKING:
    from stackbench.audit.facts import Facts

SEVERITIES = ("crit", "err", "warn", "info")

# A rule's example: saved facts as `stackbench facts save` writes them, file name -> text (`qemu-server/100.conf`
# for a VM config). Read with the real loader (`audit.examples.facts_of`), so an example is also a capture.
Example = Mapping[str, str]


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: str
    subject: str  # what the finding is about: a pool, dataset, vdev or VM disk
    evidence: str  # the exact property and value that triggered it
    fix: str  # the command that fixes it
    prove: str | None = None  # the stackbench command that would measure the claim on this machine

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule_id,
            "severity": self.severity,
            "subject": self.subject,
            "evidence": self.evidence,
            "fix": self.fix,
            "prove": self.prove,
        }


@dataclass(frozen=True, kw_only=True)
class Rule:
    id: str
    title: str
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

    def __post_init__(self) -> None:
        for severity in (self.severity, *self.other_severities):
            if severity not in SEVERITIES:
                raise ValueError(f"{self.id}: unknown severity {severity}")
        if self.severity in self.other_severities:
            raise ValueError(f"{self.id}: {self.severity} is the rule's own severity, not another one")

    def finding(self, subject: str, evidence: str, fix: str, prove: str | None = None, *,
                severity: str | None = None) -> Finding:
        """A finding of this rule: the id and severity come from the rule, so a check cannot misspell them.

        `severity` is only for the cases the rule declares in `other_severities`; an undeclared one raises,
        because a finding whose severity the rule list does not show would surprise `--min-severity`.
        """
        if severity is not None and severity != self.severity and severity not in self.other_severities:
            raise ValueError(f"{self.id}: severity {severity} is not declared in other_severities")
        return Finding(self.id, severity or self.severity, subject, evidence, fix, prove=prove)
