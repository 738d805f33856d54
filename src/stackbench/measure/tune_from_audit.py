"""`stackbench tune -t DIR` without `--knob`: the knobs that answer what the audit finds on the target's stack.

Why the audit and not a list of favourite knobs: a knob is worth rounds only where something is wrong, and the
audit's rules already say what is wrong and why (audit/rules/); each knob declares the rule ids it answers
(`Knob.audit_rules`), so a finding leads to its knob with no second copy of the rule here. The machine is
probed as `stackbench audit` does (audit/service.gather_facts), every rule is run, and a finding counts for the
target when it is about one of the knob's subjects for this target (its disk, its mount, its dataset) or the
knob acts host-wide (a ZFS module parameter, a sysctl).

The value tried is the one the finding's fix names when it is one of the knob's candidates, else the knob's
only candidate other than the value now, else all of them, raced (the winner then proven). Nothing is decided
by the finding beyond that: the session still proves the change before keeping it.

With `--audit ID` the findings are a stored audit's, those that still hold (tune_stored_audit.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from stackbench.audit.report import run_rules
from stackbench.audit.rule import Finding
from stackbench.audit.rules import REGISTRY as RULES
from stackbench.audit.service import gather_facts
from stackbench.audit.subject import AuditSubject
from stackbench.base.errors import UsageError
from stackbench.measure.tune_plan import PlannedKnob, plan_knob
from stackbench.tune.knob import Knob, Safety, Scope, Subject
from stackbench.tune.knobs import REGISTRY as KNOBS
from stackbench.tune.knobs.forbidden import FORBIDDEN
from stackbench.tune.subjects import TargetInfo

HOST_WIDE = (Scope.POOL_MODULE, Scope.HOST_SYSCTL)


@dataclass(frozen=True)
class Proposal:
    """A knob proposed from findings: the plan of its change, the candidates it has here, and the findings."""

    planned: PlannedKnob
    candidates: tuple[str, ...]
    findings: tuple[Finding, ...]
    chosen: str  # why this value: the fix names it, or the knob's candidates

    def to_json(self) -> dict[str, Any]:
        return {**self.planned.to_json(), "candidates": list(self.candidates), "value_from": self.chosen,
                "why": [_finding_json(f) for f in self.findings]}


@dataclass(frozen=True)
class NotProposed:
    """A finding, or a knob answering findings, that the plan leaves out, with why."""

    what: str  # a knob id, or the rule id of a finding no knob answers
    findings: tuple[Finding, ...]
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "why": self.why, "findings": [_finding_json(f) for f in self.findings]}


@dataclass(frozen=True)
class AuditProposals:
    findings: int  # every finding of the audit, on any part of the machine
    proposed: list[Proposal]
    not_proposed: list[NotProposed]


def _finding_json(finding: Finding) -> dict[str, str]:
    return {"rule": finding.rule_id, "severity": finding.severity, "subject": finding.subject,
            "evidence": finding.evidence, "fix": finding.fix}


def live_audit() -> tuple[AuditSubject, list[Finding]]:
    """This machine's findings, every rule run on facts captured now (as `stackbench audit` does), and which
    machine it is (the subject a stored audit of it has)."""
    facts, subject = gather_facts(None, None, None)
    return subject, run_rules(facts, RULES).findings


def propose(info: TargetInfo, findings: list[Finding], allow: frozenset[Safety],
            knobs: Iterable[Knob] = KNOBS, gone: Sequence[tuple[Finding, str]] = ()) -> AuditProposals:
    """The knobs that answer the findings about the target's stack, and what is left out with why; `gone` are
    findings of a stored audit that no longer hold (tune_stored_audit.py), each with why, listed among what is
    left out where they are about the target."""
    knobs = tuple(knobs)
    proposed: list[Proposal] = []
    left_out: list[NotProposed] = []
    answered: set[int] = set()
    for knob in knobs:
        here = _answered_here(knob, findings, info)
        if not here:
            continue
        answered.update(id(f) for f in here)
        if knob.safety is not Safety.SAFE and knob.safety not in allow:
            left_out.append(NotProposed(knob.id, here, f"a {knob.safety.value} knob: add --allow "
                                                       f"{knob.safety.value} to try it"))
            continue
        try:
            proposed.append(_proposal(knob, here, info, allow))
        except UsageError as error:
            left_out.append(NotProposed(knob.id, here, error.what))
    stack = _stack_names(info)
    for finding, why in gone:
        knob = next((k for k in knobs if _answered_here(k, [finding], info)), None)
        if knob is not None or _about_target(finding, stack, info):
            left_out.append(NotProposed(knob.id if knob is not None else finding.rule_id, (finding,), why))
    for finding in findings:
        if id(finding) in answered or not _about_target(finding, stack, info):
            continue
        left_out.append(NotProposed(finding.rule_id, (finding,), _unanswered_why(finding)))
    return AuditProposals(len(findings), proposed, left_out)


def _answered_here(knob: Knob, findings: Sequence[Finding], info: TargetInfo) -> tuple[Finding, ...]:
    """The findings `knob` answers on the target's stack: of a rule it answers, about one of its subjects for
    this target (any, for a knob that acts host-wide)."""
    about = [f for f in findings if f.rule_id in knob.audit_rules]
    if not about:
        return ()
    found = knob.subjects(info)
    if isinstance(found, str):
        return ()
    return tuple(f for f in about if knob.scope in HOST_WIDE or _names_any(f.subject, found))


def _proposal(knob: Knob, findings: tuple[Finding, ...], info: TargetInfo, allow: frozenset[Safety]) -> Proposal:
    subjects = knob.subjects(info)
    assert not isinstance(subjects, str)
    first = subjects[0]
    now = knob.access.read(first)
    current = knob.access.value_of(now)
    offered = knob.access.offered(first, now)
    candidates = tuple(c for c in knob.values.candidates(first, now)
                       if (offered is None or c in offered) and c != current)
    named = [c for c in candidates if any(c in _words(f.fix) for f in findings)]
    value: str | tuple[str, ...]
    if named:
        value, chosen = named[0], f"the fix of {findings[0].rule_id}"
    elif len(candidates) > 1:
        value, chosen = candidates, "the knob's candidates, raced"
    elif candidates:
        value, chosen = candidates[0], "the knob's candidates"
    else:
        raise UsageError(f"{knob.id} has no candidate other than its value now ({current})", "")
    return Proposal(plan_knob(knob, value, info, allow | {knob.safety}), candidates, findings, chosen)


def _words(text: str) -> set[str]:
    return set(re.split(r"[\s=,;:()'\"]+", text))


def _names_any(subject_text: str, subjects: list[Subject]) -> bool:
    words = _words(subject_text)
    return any(s.name in words for s in subjects)


def _stack_names(info: TargetInfo) -> set[str]:
    names = {d.get("name") for d in info.devices} | set(info.pool_disks)
    names |= {n for n in (info.mount_point, info.dataset, info.pool) if n}
    return {str(n) for n in names if n}


def _about_target(finding: Finding, stack: set[str], info: TargetInfo) -> bool:
    """A finding without a knob counts for the target when it names a part of its stack, or is about the host
    (its kernel, or its ARC when the target is on ZFS)."""
    if _words(finding.subject) & stack:
        return True
    return finding.rule_id.startswith("HOST-") or (bool(info.dataset) and finding.rule_id.startswith(("ARC-", "L2ARC-")))


def _unanswered_why(finding: Finding) -> str:
    """Why no knob is proposed for a finding: the setting its fix changes is one tune never tries, or no knob
    of the catalogue answers its rule."""
    words = _words(finding.fix)
    for entry in FORBIDDEN:
        if entry.audit_rule == finding.rule_id or entry.id.rsplit(".", 1)[-1] in words:
            return f"its fix changes {entry.id}, a setting tune never tries (forbidden: {entry.reason}); " \
                   "apply the fix by hand"
    return "no knob answers this rule: follow its fix by hand, then measure it with `stackbench ab`"
