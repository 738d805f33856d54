"""ZP-ASHIFT-FLASH512: a vdev with ashift=9 on a flash device (rotational=0) that reports 512-byte physical
sectors.

Flash pages are 4 KiB or larger and SSDs often report 512 bytes for compatibility, so the drive's own report
is not the truth here: the OpenZFS hardware and tuning docs advise ashift 12 (or 13) on flash. ZP-ASHIFT-LOW
catches disks that admit a larger physical sector; this rule catches the ones that do not. Info, because the
drive may really be 512-native and because ashift is fixed per vdev: only new or rebuilt vdevs can change.

The vdev's real ashift comes from `zdb -C` or (2.2+) vdev properties, never the pool property. Inside a VM,
`rotational` describes the virtual disk, not the device behind it (knowledge base, section 2), so the
evidence says when the facts come from a VM.
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.prove import SYNC_4K, ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import ashift_evidence, vdev_subject


def check(facts: Facts) -> Iterator[Finding]:
    for pool, vdevs in facts.vdevs.items():
        for vdev in vdevs:
            if vdev.ashift != 9:
                continue
            flash = [leaf for leaf in vdev.leaves
                     if facts.rotational(leaf) is False and facts.physical_sector(leaf) == 512]
            if not flash:
                continue
            leaves = ", ".join(f"{leaf}" + (f" (disk {facts.disk_of(leaf)})" if facts.disk_of(leaf) != leaf else "")
                               + ": rotational=0, physical_block_size=512" for leaf in flash)
            note = "; the facts come from a VM, where rotational describes the virtual disk" if facts.is_vm else ""
            yield RULE.finding(
                vdev_subject(pool, vdev),
                f"{ashift_evidence(vdev)}; {leaves} (block queue){note}",
                f"create new vdevs with -o ashift=12 (zpool add -o ashift=12 {pool} ...); {vdev.name} keeps "
                "ashift 9 until it is recreated",
                prove=ab(RULE.id, mountpoint(facts, pool), SYNC_4K,
                         f"recreate {pool} (or the vdev) with -o ashift=12 and restore the data"),
            )


_SSD_MIRROR = {
    "zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
    """),
    "sys-block-queue.txt": tab_separated("""
        /sys/block/sda/queue/physical_block_size  512
        /sys/block/sda/queue/rotational           0
        /sys/block/sdb/queue/physical_block_size  512
        /sys/block/sdb/queue/rotational           0
    """),
}
FAILING = (
    {**_SSD_MIRROR, "zpool-get-vdevs.txt": tab_separated("""
        ## tank
        mirror-0  ashift  9  -
    """)},
)
PASSING = (
    {**_SSD_MIRROR, "zpool-get-vdevs.txt": tab_separated("""
        ## tank
        mirror-0  ashift  12  -
    """)},
)


RULE = Rule(
    id="ZP-ASHIFT-FLASH512",
    title="ashift 9 on flash that reports 512-byte sectors",
    checks="ashift=9 on a flash device (rotational=0) that reports 512-byte physical sectors",
    severity="info",
    rationale="Flash pages are 4 KiB or larger and drives often misreport 512; the docs advise ashift 12 or 13 on flash.",
    fix="Use -o ashift=12 for new vdevs",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Hardware.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
