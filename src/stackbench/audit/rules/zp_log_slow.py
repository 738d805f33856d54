"""ZP-LOG-SLOW: a log device is rotational. A SLOG must have lower latency than the pool; a spinning disk
(8-15 ms per sync write, docs/method.md) is slower than most pools' own ZIL."""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, vdev_subject


def check(facts: Facts) -> Iterator[Finding]:
    for pool in facts.vdevs:
        for vdev in class_vdevs(facts, pool, "logs"):
            slow = [leaf for leaf in vdev.leaves if facts.rotational(leaf)]
            if slow:
                yield RULE.finding(
                    vdev_subject(pool, vdev), f"rotational=1 on {', '.join(slow)}",
                    f"zpool remove {pool} {vdev.name}; add a low-latency SSD with power-loss protection",
                    prove=f"stackbench slog /mnt/candidate1 /mnt/candidate2 --pool-dataset /{pool}/slogtest ranks log devices by QD1 sync-write latency",
                )


_POOL_WITH_LOG_SDC = zpool_status("""
    tank
      mirror-0
        sda
        sdb
    logs
      sdc
""")
FAILING = (
    {"zpool-status.txt": _POOL_WITH_LOG_SDC,
     "sys-block-queue.txt": tab_separated("/sys/block/sdc/queue/rotational  1")},
)
PASSING = (
    {"zpool-status.txt": _POOL_WITH_LOG_SDC,
     "sys-block-queue.txt": tab_separated("/sys/block/sdc/queue/rotational  0")},
)


RULE = Rule(
    id="ZP-LOG-SLOW",
    title="Rotational log device",
    checks="rotational log device",
    severity="warn",
    rationale="A SLOG only helps when its sync-write latency is lower than the pool's.",
    fix="Use a low-latency SSD with power-loss protection, or Optane",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zpoolconcepts.7.html#Intent_Log",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
