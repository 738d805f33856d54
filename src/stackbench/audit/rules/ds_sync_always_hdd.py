"""DS-SYNC-ALWAYS-HDD: sync=always on a pool of rotational disks without a log vdev: every write waits for
the disks' cache flush, a "large performance penalty" (about 20 % on writes in docs/method.md section 3)."""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.prove import RAND_4K_WRITE, ab, in_guest, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, data_vdevs, pool_of


def check(facts: Facts) -> Iterator[Finding]:
    for name, props in facts.datasets.items():
        if props.get("sync", ("",))[0] != "always":
            continue
        pool = pool_of(name)
        leaves = [leaf for v in data_vdevs(facts, pool) for leaf in v.leaves]
        if leaves and all(facts.rotational(leaf) for leaf in leaves) and not class_vdevs(facts, pool, "logs"):
            fix = f"zfs set sync=standard {name}, or add a SLOG (zpool add {pool} log mirror DEV1 DEV2)"
            is_zvol = props.get("type", ("",))[0] == "volume"
            change = f"zfs set sync=standard {name}"
            yield RULE.finding(
                name,
                f"sync=always ({props['sync'][1]}), data disks rotational ({', '.join(leaves)}), no log vdev", fix,
                prove=in_guest(RULE.id, RAND_4K_WRITE, change) if is_zvol
                else ab(RULE.id, mountpoint(facts, name), RAND_4K_WRITE, change),
            )


_SPINNING = {
    "sys-block-queue.txt": tab_separated("""
        /sys/block/sda/queue/rotational  1
        /sys/block/sdb/queue/rotational  1
    """),
    "zfs-get-Hp-all.txt": tab_separated("""
        tank/db  type  filesystem  -
        tank/db  sync  always      local
    """),
}
FAILING = (
    {**_SPINNING, "zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
    """)},
)
PASSING = (
    {**_SPINNING, "zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
        logs
          mirror-1
            nvme0n1
            nvme1n1
    """)},
)


RULE = Rule(
    id="DS-SYNC-ALWAYS-HDD",
    title="sync=always on spinning disks without a SLOG",
    checks="sync=always on rotational data disks without a log vdev",
    severity="warn",
    rationale="Every write waits for the disks' cache flush.",
    fix="sync=standard, or add a SLOG",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#sync",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
