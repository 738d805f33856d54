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


def _pool_list(special_allocated: int) -> str:
    """`zpool list -Hp -v` of a pool with a 1 GB special mirror (class headers are space-padded, rows tabbed)."""
    return ("tank\t3000000000\t900000000\t2100000000\t-\t-\t5\t30\t1.00\tONLINE\t-\n"
            "\tmirror-0\t2000000000\t100000000\t1900000000\t-\t-\t5\t5\t-\tONLINE\n"
            "special         -      -      -        -         -      -      -  -\n"
            f"\tmirror-1\t1000000000\t{special_allocated}\t{1000000000 - special_allocated}\t-\t-\t5\t"
            f"{special_allocated // 10000000}\t-\tONLINE\n")


FAILING = ({"zpool-list-Hpv.txt": _pool_list(special_allocated=800000000)},)
PASSING = ({"zpool-list-Hpv.txt": _pool_list(special_allocated=300000000)},)


RULE = Rule(
    id="ZP-SPECIAL-FULL",
    title="Special vdev beyond its small-block limit",
    checks="special class allocated beyond 100 − zfs_special_class_metadata_reserve_pct %",
    severity="warn",
    rationale="Above the limit new small blocks land on the data disks; a full special spills metadata too.",
    fix="Add another special mirror or lower special_small_blocks",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Module%20Parameters.html#zfs-special-class-metadata-reserve-pct",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
