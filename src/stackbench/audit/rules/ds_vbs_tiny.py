"""DS-VBS-TINY: a zvol's volblocksize below the pool's sector size (2^ashift): every block is padded."""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    for name in facts.zvols():
        pool = name.split("/")[0]
        ashifts = [v.ashift for v in facts.vdevs.get(pool, []) if v.vdev_class == "normal" and v.ashift]
        size = facts.dataset_prop(name, "volblocksize")
        if ashifts and size and size.isdigit() and int(size) < 2 ** max(ashifts):
            yield RULE.finding(
                name, f"volblocksize={size} < 2^{max(ashifts)}",
                "recreate the zvol with a larger -o volblocksize (set at creation only)",
            )


_MIRROR_ASHIFT_12 = {
    "zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
    """),
    "zpool-get-vdevs.txt": tab_separated("""
        ## tank
        mirror-0  ashift  12  -
    """),
}
FAILING = (
    {**_MIRROR_ASHIFT_12, "zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type          volume  -
        tank/vm-100-disk-0  volblocksize  2048    -
    """)},
)
PASSING = (
    {**_MIRROR_ASHIFT_12, "zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type          volume  -
        tank/vm-100-disk-0  volblocksize  16384   -
    """)},
)


RULE = Rule(
    id="DS-VBS-TINY",
    title="volblocksize smaller than the sector size",
    checks="volblocksize below 2^ashift",
    severity="warn",
    rationale="Each block is padded to a full sector: wasted space and extra I/O.",
    fix="Recreate the zvol with volblocksize >= 2^ashift",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#zvol-volblocksize",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
