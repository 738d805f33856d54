"""ZP-LOG-OVERSIZE: the log class is larger than ZFS can ever fill: more than max(ARC c_max, RAM/2).

The ZIL only holds synchronous writes that are not yet in a committed transaction group (a few seconds of
writes), so the knowledge base's bound is generous and the OpenZFS tuning docs and Proxmox put a useful
SLOG at about 4 GB. Space beyond that is never used; left unpartitioned, it is spare area that helps an SSD's
write latency and endurance (over-provisioning). Info: nothing breaks.

Sizes: the log class rows of `zpool list -v -Hp` (summed over log vdevs, since the ZIL spreads over all
of them), else the smallest leaf of each log vdev from lsblk. The limit uses arcstats c_max and
/proc/meminfo MemTotal; with neither, the rule stays silent.
"""

from typing import Iterator

from stackbench.audit.examples import kstat, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs

GIB = 1024**3


def _log_size(facts, pool, logs):
    if (pool, "logs") in facts.class_space:
        return facts.class_space[(pool, "logs")][0], "zpool list -v"
    total = 0
    for vdev in logs:
        sizes = [facts.block_devices[name].size for name in (facts.kernel_name(leaf) for leaf in vdev.leaves)
                 if name in facts.block_devices and facts.block_devices[name].size]
        if len(sizes) != len(vdev.leaves) or not sizes:
            return None, ""
        total += min(sizes)
    return total, "lsblk"


def check(facts: Facts) -> Iterator[Finding]:
    c_max, memtotal = facts.arcstats.get("c_max") or 0, facts.meminfo.get("MemTotal") or 0
    limit = max(c_max, memtotal // 2)
    if limit <= 0:
        return
    for pool in facts.vdevs:
        logs = class_vdevs(facts, pool, "logs")
        if not logs:
            continue
        size, source = _log_size(facts, pool, logs)
        if not size or size <= limit:
            continue
        parts = ([f"ARC c_max {c_max / GIB:.1f} GiB (arcstats)"] if c_max else []) + (
            [f"MemTotal/2 {memtotal / 2 / GIB:.1f} GiB (/proc/meminfo)"] if memtotal else [])
        names = ", ".join(v.name for v in logs)
        yield RULE.finding(
            f"{pool} logs",
            f"log vdev {names}: {size / GIB:.1f} GiB ({source}) > max({', '.join(parts)})",
            f"zpool remove {pool} {logs[0].name}; repartition the device with a log partition of about 4 GiB "
            f"(never more than {limit / GIB:.1f} GiB) and leave the rest unpartitioned (over-provisioning); "
            f"zpool add {pool} log <partition>",
        )


def _log_of(size: int) -> dict[str, str]:
    """A pool with a log device of `size` bytes, on a host with 16 GiB of RAM and a 2 GiB ARC cap: the limit is
    max(2 GiB, 16 GiB / 2) = 8 GiB."""
    return {
        "zpool-status.txt": zpool_status("""
            tank
              mirror-0
                sda
                sdb
            logs
              nvme0n1
        """),
        "zpool-list-Hpv.txt": ("tank\t2000000000\t100000000\t1900000000\t-\t-\t1\t5\t1.00\tONLINE\t-\n"
                               "\tmirror-0\t2000000000\t100000000\t1900000000\t-\t-\t1\t5\t-\tONLINE\n"
                               "logs            -      -      -        -         -      -      -  -\n"
                               f"\tnvme0n1\t{size}\t0\t{size}\t-\t-\t0\t0\t-\tONLINE\n"),
        "arcstats.txt": kstat(c_max=2 * GIB),
        "meminfo.txt": f"MemTotal:       {16 * GIB // 1024} kB\n",
    }


FAILING = (_log_of(size=100 * GIB),)
PASSING = (_log_of(size=4 * GIB),)


RULE = Rule(
    id="ZP-LOG-OVERSIZE",
    title="Log device larger than ZFS can use",
    checks="log class larger than max(ARC c_max, RAM/2)",
    severity="info",
    rationale="The ZIL holds only a few seconds of sync writes; about 4 GB is typical, the rest is never used.",
    fix="Use a small log partition and leave the rest unallocated",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#synchronous-i-o",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
