"""Rules and findings as data (ruff's registry shape): id, title, severity, rationale, fix, source, check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

SEVERITIES = ("crit", "err", "warn", "info")


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


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: str
    rationale: str
    fix: str
    source: str
    check: Callable[[Any], Iterable[Finding]] = field(repr=False, compare=False)
    status: str = "stable"  # stable | disputed
    doc: str = ""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.id}: unknown severity {self.severity}")
