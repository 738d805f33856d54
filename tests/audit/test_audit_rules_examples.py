"""Every registered rule on the examples it carries (ruff's shape): its failing facts are reported under its id,
its passing facts are not. The examples are saved-facts directories read by the real loader, so an example
with a misspelt file or an unreadable format fails here instead of passing for want of facts."""

from __future__ import annotations

import fnmatch

import pytest

from stackbench.audit.examples import facts_of
from stackbench.audit.facts import FACT_FILES, ZDB_CONFIG
from stackbench.audit.report import run_rules
from stackbench.audit.rule import Example, Rule
from stackbench.audit.rules import REGISTRY

# What load_facts reads: the table's files, zdb's, and the configuration files the probe copies.
READ = {row.file for row in (*FACT_FILES, ZDB_CONFIG)} | {"qemu-server/*.conf", "libvirt/*.xml", "pve/storage.cfg"}
FAILING = [(rule, example) for rule in REGISTRY for example in rule.failing]
PASSING = [(rule, example) for rule in REGISTRY for example in rule.passing]


def _ids(cases: list[tuple[Rule, Example]]) -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for rule, _ in cases:
        seen[rule.id] = seen.get(rule.id, 0) + 1
        ids.append(f"{rule.id}-{seen[rule.id]}")
    return ids


def _audit(example: Example) -> list:
    """Every rule over the example: nothing unreadable, no rule failing on it."""
    assert example, "an example with no files"
    for name in example:
        assert any(fnmatch.fnmatchcase(name, pattern) for pattern in READ), f"{name} is not a file the audit reads"
    report = run_rules(facts_of(example), REGISTRY)
    assert report.problems == []
    return report.findings


def test_every_rule_has_a_failing_and_a_passing_example() -> None:
    assert [r.id for r in REGISTRY if not r.failing] == []
    assert [r.id for r in REGISTRY if not r.passing] == []


@pytest.mark.parametrize("rule, example", FAILING, ids=_ids(FAILING))
def test_a_failing_example_is_reported_by_its_rule(rule: Rule, example: Example) -> None:
    mine = [f for f in _audit(example) if f.rule_id == rule.id]
    assert mine, f"{rule.id} did not fire on its failing example"
    assert all(f.severity in {rule.severity, *rule.other_severities} and f.evidence and f.fix for f in mine)


@pytest.mark.parametrize("rule, example", PASSING, ids=_ids(PASSING))
def test_a_passing_example_is_not_reported_by_its_rule(rule: Rule, example: Example) -> None:
    assert [f for f in _audit(example) if f.rule_id == rule.id] == []
