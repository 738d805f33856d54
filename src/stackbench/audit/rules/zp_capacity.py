"""ZP-CAPACITY: pool capacity at or above 90 %: allocation switches to best-fit and IOPS drop."""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    for pool, props in facts.pools.items():
        value = props.get("capacity", "").rstrip("%")
        if value.isdigit() and int(value) >= 90:
            yield RULE.finding(pool, f"capacity={value}%", "free space or add vdevs")


FAILING = ({"zpool-get-Hp-all.txt": tab_separated("tank  capacity  95  -")},)
PASSING = ({"zpool-get-Hp-all.txt": tab_separated("tank  capacity  70  -")},)


RULE = Rule(
    id="ZP-CAPACITY",
    title="Pool nearly full",
    checks="pool capacity ≥ 90 %",
    severity="warn",
    rationale="Metaslabs under 4 % free switch to best-fit allocation, which is CPU-heavy and cuts IOPS.",
    fix="Free space or grow the pool",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#free-space",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
