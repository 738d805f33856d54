"""ZP-LOG-UNUSED: a pool has a log vdev (SLOG) but none of its file systems and zvols can use it: each has
sync=disabled or logbias=throughput.

A SLOG only serves synchronous writes through the ZIL. With sync=disabled there are none; with
logbias=throughput ZFS writes the ZIL blocks to the main pool and never to the log device. The SLOG then
costs a device and a slot for nothing. Either it can go (`zpool remove` works for log vdevs), or a
dataset's settings are not what was meant (sync=disabled on VM storage is DS-SYNC-DISABLED, crit).

Only file systems and zvols of the pool count (snapshots inherit). A dataset whose facts have neither
property (unknown) counts as a user of the log, so the rule only fires when the facts show every one.
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, pool_of

SHOWN = 6


def _bypass(facts, name):
    sync, logbias = facts.dataset_prop(name, "sync"), facts.dataset_prop(name, "logbias")
    if sync == "disabled":
        return f"sync=disabled ({facts.dataset_source(name, 'sync')})"
    if logbias == "throughput":
        return f"logbias=throughput ({facts.dataset_source(name, 'logbias')})"
    return None


def check(facts: Facts) -> Iterator[Finding]:
    for pool in facts.vdevs:
        logs = class_vdevs(facts, pool, "logs")
        members = [name for name, props in facts.datasets.items()
                   if pool_of(name) == pool and props.get("type", ("",))[0] in ("filesystem", "volume")]
        if not logs or not members:
            continue
        reasons = {name: _bypass(facts, name) for name in members}
        if not all(reasons.values()):
            continue
        shown = "; ".join(f"{name} {reason}" for name, reason in list(reasons.items())[:SHOWN])
        more = f"; and {len(members) - SHOWN} more" if len(members) > SHOWN else ""
        names = ", ".join(v.name for v in logs)
        yield RULE.finding(
            f"{pool} logs",
            f"log vdev {names} (zpool status), but every file system and zvol bypasses it (zfs get): {shown}{more}",
            f"zpool remove {pool} {logs[0].name} if nothing needs it; or zfs set sync=standard / logbias=latency "
            "on the datasets whose synchronous writes should use it",
        )


_POOL_WITH_LOG = zpool_status("""
    tank
      mirror-0
        sda
        sdb
    logs
      nvme0n1
""")
FAILING = (
    {"zpool-status.txt": _POOL_WITH_LOG, "zfs-get-Hp-all.txt": tab_separated("""
        tank     type     filesystem  -
        tank     sync     disabled    local
        tank/vm  type     volume      -
        tank/vm  logbias  throughput  local
        tank/vm  sync     standard    default
    """)},
)
PASSING = (
    {"zpool-status.txt": _POOL_WITH_LOG, "zfs-get-Hp-all.txt": tab_separated("""
        tank     type     filesystem  -
        tank     sync     disabled    local
        tank/vm  type     volume      -
        tank/vm  logbias  latency     default
        tank/vm  sync     standard    default
    """)},
)


RULE = Rule(
    id="ZP-LOG-UNUSED",
    title="Log device that no dataset uses",
    checks="log vdev while every file system and zvol of the pool has sync=disabled or logbias=throughput",
    severity="info",
    rationale="Asynchronous writes never touch the ZIL, and logbias=throughput keeps it off the log device.",
    fix="Remove the SLOG, or revisit sync/logbias",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#logbias",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
