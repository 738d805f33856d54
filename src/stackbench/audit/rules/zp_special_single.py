"""ZP-SPECIAL-SINGLE: a special or dedup class vdev that is a single disk.

Blocks in that class exist only there: losing the one disk loses the pool. Sources: zpoolconcepts(7)
"Special Allocation Class"; Proxmox ZFS docs.
"""

from typing import Iterator

from stackbench.audit.examples import zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import vdev_subject


def check(facts: Facts) -> Iterator[Finding]:
    for pool, vdevs in facts.vdevs.items():
        for vdev in vdevs:
            if vdev.vdev_class in ("special", "dedup") and vdev.type in ("disk", "file"):
                yield RULE.finding(
                    vdev_subject(pool, vdev),
                    f"{vdev.vdev_class} vdev {vdev.name} is a single disk (zpool status)",
                    f"zpool attach {pool} {vdev.name} <new-disk>",
                )


FAILING = (
    {"zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
        special
          sdc
    """)},
)
PASSING = (
    {"zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
        special
          mirror-1
            sdc
            sdd
    """)},
)


RULE = Rule(
    id="ZP-SPECIAL-SINGLE",
    title="Special or dedup vdev without redundancy",
    checks="special/dedup vdev that is a single disk",
    severity="crit",
    rationale="Blocks in the special/dedup class exist only on that vdev; losing a single disk loses the pool.",
    fix="zpool attach POOL DEVICE NEW-DEVICE to make it a mirror",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zpoolconcepts.7.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
