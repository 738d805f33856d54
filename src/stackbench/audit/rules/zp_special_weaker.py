"""ZP-SPECIAL-WEAKER: the special class tolerates fewer disk failures than the data vdevs (e.g. a 2-way
mirror beside raidz2). zpoolconcepts(7): its redundancy "should match the other normal devices"."""

from typing import Iterator

from stackbench.audit.examples import zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, data_vdevs, failures_tolerated, vdev_subject


def check(facts: Facts) -> Iterator[Finding]:
    for pool in facts.vdevs:
        data = [failures_tolerated(v) for v in data_vdevs(facts, pool)]
        for vdev in class_vdevs(facts, pool, "special"):
            if data and vdev.type not in ("disk", "file") and failures_tolerated(vdev) < min(data):
                yield RULE.finding(
                    vdev_subject(pool, vdev),
                    f"special {vdev.name} survives {failures_tolerated(vdev)} failures, data vdevs {min(data)}",
                    f"zpool attach {pool} {vdev.leaves[0]} <new-disk>",
                )


FAILING = (
    {"zpool-status.txt": zpool_status("""
        tank
          raidz2-0
            sda
            sdb
            sdc
            sdd
        special
          mirror-1
            sde
            sdf
    """)},
)
PASSING = (
    {"zpool-status.txt": zpool_status("""
        tank
          raidz2-0
            sda
            sdb
            sdc
            sdd
        special
          mirror-1
            sde
            sdf
            sdg
    """)},
)


RULE = Rule(
    id="ZP-SPECIAL-WEAKER",
    title="Special vdev less redundant than the data vdevs",
    checks="special mirror tolerates fewer failures than the data vdevs",
    severity="warn",
    rationale="The pool is only as safe as its least redundant class.",
    fix="Attach one more disk to the special mirror",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zpoolconcepts.7.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
