"""ZP-SPECIAL-FULL: the special class is at or above 75 % full (100 - zfs_special_class_metadata_reserve_pct):
small blocks then go back to the data disks, and when it is full metadata spills too, never to move back."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    reserve = int(facts.module_parameters.get("zfs_special_class_metadata_reserve_pct", "25") or 25)
    for (pool, vclass), (size, alloc) in facts.class_space.items():
        if vclass == "special" and size and alloc / size * 100 >= 100 - reserve:
            yield RULE.finding(
                pool, f"special class {alloc / size:.0%} allocated (limit {100 - reserve} %)",
                f"zpool add {pool} special mirror <disk> <disk>, or lower special_small_blocks",
                prove=f"stackbench smallblocks /{pool} --special-size {size} --recordsize 128K sizes special_small_blocks for this special class",
            )


RULE = Rule(
    id="ZP-SPECIAL-FULL",
    title="Special vdev beyond its small-block limit",
    severity="warn",
    rationale="Above the limit new small blocks land on the data disks; a full special spills metadata too.",
    fix="Add another special mirror or lower special_small_blocks",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Module%20Parameters.html#zfs-special-class-metadata-reserve-pct",
    check=check,
    doc=__doc__,
)
