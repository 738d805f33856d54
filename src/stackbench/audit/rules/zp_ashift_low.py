"""ZP-ASHIFT-LOW: a top-level vdev's ashift is below log2 of its disks' physical sector size.

Sub-sector writes make the drive read-modify-write; ashift is fixed when the vdev is created. The real
per-vdev ashift comes from `zdb -C` (the pool property is only the hint for new vdevs).
"""

import math

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for pool, vdevs in facts.vdevs.items():
        for vdev in vdevs:
            sizes = [int(facts.block_queue.get(leaf, {}).get("physical_block_size", 0) or 0) for leaf in vdev.leaves]
            biggest = max(sizes, default=0)
            if vdev.ashift is None or biggest <= 0:
                continue
            if vdev.ashift < int(math.log2(biggest)):
                yield Finding(
                    "ZP-ASHIFT-LOW", "warn", f"{pool}/{vdev.name}",
                    f"ashift={vdev.ashift} (zdb -C) but physical_block_size={biggest} on {', '.join(vdev.leaves)}",
                    f"rebuild the vdev or pool with -o ashift={int(math.log2(biggest))}",
                    prove="stackbench run -t /POOL/DATASET --bs 4k --qd 1,4 --rw randwrite --sync "
                          "before and after the rebuild, then stackbench compare",
                )


RULE = Rule(
    "ZP-ASHIFT-LOW", "vdev ashift below the disks' physical sector size", "warn",
    "Writes smaller than the physical sector make the drive read-modify-write.",
    "Recreate the vdev with -o ashift=12 (4Kn/512e disks)",
    "https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#alignment-shift-ashift",
    check, doc=__doc__,
)
