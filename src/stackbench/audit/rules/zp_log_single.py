"""ZP-LOG-SINGLE: the log vdev is a single device. Losing it costs in-flight sync writes only if the host
also crashes; Proxmox mirrors it mainly to avoid a performance drop. Advisory."""

from typing import Iterator

from stackbench.audit.examples import zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, vdev_subject


def check(facts: Facts) -> Iterator[Finding]:
    for pool in facts.vdevs:
        for vdev in class_vdevs(facts, pool, "logs"):
            if vdev.type in ("disk", "file"):
                yield RULE.finding(vdev_subject(pool, vdev), f"log vdev {vdev.name} is a single device",
                                   f"zpool attach {pool} {vdev.name} <new-device>")


FAILING = (
    {"zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
        logs
          nvme0n1
    """)},
)
PASSING = (
    {"zpool-status.txt": zpool_status("""
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
    id="ZP-LOG-SINGLE",
    title="Unmirrored log device",
    checks="unmirrored log device",
    severity="info",
    rationale="A lost SLOG plus a host crash loses the last seconds of sync writes.",
    fix="Attach a mirror if that risk matters",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zpoolconcepts.7.html#Intent_Log",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
