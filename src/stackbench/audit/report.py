"""Running the rules over facts, in a stable order, without letting one rule's bug hide the others."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from stackbench.audit.facts import Facts
from stackbench.audit.rule import SEVERITIES, Finding, Rule

ORDER = {severity: index for index, severity in enumerate(SEVERITIES)}


@dataclass
class AuditReport:
    findings: list[Finding]
    problems: list[str] = field(default_factory=list)  # unreadable fact files, rule failures

    def to_json(self, facts: Facts) -> dict[str, Any]:
        counts = {severity: sum(1 for f in self.findings if f.severity == severity) for severity in SEVERITIES}
        from stackbench.audit.rules import BY_ID

        def with_rule(finding: Finding) -> dict[str, Any]:
            rule = BY_ID.get(finding.rule_id)
            extra = {"title": rule.title, "why": rule.rationale, "source": rule.source, "status": rule.status} if rule else {}
            return {**finding.to_json(), **extra}

        return {"zfs_version": facts.zfs_version,
                "zfs_version_parsed": ".".join(map(str, facts.version)) if facts.version else None,
                "counts": counts, "findings": [with_rule(f) for f in self.findings], "problems": self.problems}


def run_rules(facts: Facts, rules: Iterable[Rule], min_severity: str = "info") -> AuditReport:
    """Every rule's findings at or above `min_severity`, most severe first, then by rule and subject."""
    findings: list[Finding] = []
    problems = list(facts.problems)
    for rule in rules:
        try:
            findings.extend(rule.check(facts))
        except Exception as error:  # noqa: BLE001 - a rule bug must not hide the other rules' findings
            problems.append(f"rule {rule.id} failed ({type(error).__name__}: {error}); this is a bug in stackbench")
    limit = ORDER[min_severity]
    findings = [f for f in findings if ORDER[f.severity] <= limit]
    findings.sort(key=lambda f: (ORDER[f.severity], f.rule_id, f.subject))
    return AuditReport(findings, problems)
