"""ZP-ASHIFT-LOW: a top-level vdev's ashift is below log2 of its disks' physical sector size.

Sub-sector writes make the drive read-modify-write; ashift is fixed when the vdev is created. The real
per-vdev ashift comes from `zdb -C` or, from OpenZFS 2.2, `zpool get ashift POOL all-vdevs`; the pool
property `ashift` is only the hint for new vdevs and is never used here.
"""

import math
from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.prove import SYNC_4K, ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import ashift_evidence, vdev_subject


def check(facts: Facts) -> Iterator[Finding]:
    for pool, vdevs in facts.vdevs.items():
        for vdev in vdevs:
            sizes = {leaf: facts.physical_sector(leaf) for leaf in vdev.leaves}
            biggest = max((s for s in sizes.values() if s), default=0)
            if vdev.ashift is None or biggest <= 0 or vdev.ashift >= int(math.log2(biggest)):
                continue
            wanted = int(math.log2(biggest))
            disks = ", ".join(f"{leaf}: {size}" for leaf, size in sizes.items() if size)
            fix = f"recreate {pool}'s vdev {vdev.name} with -o ashift={wanted} (zpool create/add; not changeable in place)"
            yield RULE.finding(
                vdev_subject(pool, vdev),
                f"{ashift_evidence(vdev)} but physical_block_size {disks}", fix,
                prove=ab(RULE.id, f"{mountpoint(facts, pool)}", SYNC_4K,
                         "rebuild the pool with the new ashift and restore"),
            )


_MIRROR_OF_4K_DISKS = {
    "zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
    """),
    "sys-block-queue.txt": tab_separated("""
        /sys/block/sda/queue/physical_block_size  4096
        /sys/block/sdb/queue/physical_block_size  4096
    """),
}
FAILING = (
    {**_MIRROR_OF_4K_DISKS, "zpool-get-vdevs.txt": tab_separated("""
        ## tank
        mirror-0  ashift  9  -
    """)},
)
PASSING = (
    {**_MIRROR_OF_4K_DISKS, "zpool-get-vdevs.txt": tab_separated("""
        ## tank
        mirror-0  ashift  12  -
    """)},
)


RULE = Rule(
    id="ZP-ASHIFT-LOW",
    title="vdev ashift below the disks' physical sector size",
    checks="a vdev's real ashift (`zdb -C` or vdev properties) below log2 of its disks' physical sector size",
    severity="warn",
    rationale="Writes smaller than the physical sector make the drive read-modify-write.",
    fix="Recreate the vdev with -o ashift=12 (4Kn/512e disks)",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#alignment-shift-ashift",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
