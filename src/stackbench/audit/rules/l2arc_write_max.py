"""L2ARC-WRITE-MAX: a cache vdev on flash (rotational=0) while l2arc_write_max is still the release default.

l2arc_write_max caps how many bytes the L2ARC is fed per interval (one second by default), so a large cache
on a fast SSD takes hours to warm up. The default depends on the release: 8 MiB up to OpenZFS 2.2.6,
32 MiB from 2.2.7 and 2.3.0 (commit 887a3c533b); docs/method.md's "default 8 MiB/s" is stale (knowledge base,
section 3). So the live value from /sys/module/zfs/parameters is compared with the default of the running
module (`versions.default_l2arc_write_max`); without a known version the rule cannot tell and stays silent.
docs/method.md raised it to about 1 GB/s on Optane; every byte fed is written to the SSD, so weigh endurance.
Inside a VM, rotational describes the virtual disk.
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.prove import ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs
from stackbench.audit.versions import default_l2arc_write_max, label

MIB = 1024**2


def check(facts: Facts) -> Iterator[Finding]:
    value = facts.module_parameters.get("l2arc_write_max", "").strip()
    default = default_l2arc_write_max(facts.version)
    if not value.isdigit() or default is None or int(value) != default:
        return
    flash = [(pool, leaf) for pool in facts.vdevs for vdev in class_vdevs(facts, pool, "cache")
             for leaf in vdev.leaves if facts.rotational(leaf) is False]
    if not flash:
        return
    raised = 4 * default
    change = f"echo {raised} > /sys/module/zfs/parameters/l2arc_write_max"
    note = "; the facts come from a VM, where rotational describes the virtual disk" if facts.is_vm else ""
    yield RULE.finding(
        "l2arc_write_max",
        f"l2arc_write_max={value} (/sys/module/zfs/parameters), the default of {label(facts.version)} "
        f"({default // MIB} MiB); flash cache device {', '.join(f'{pool} cache {leaf}' for pool, leaf in flash)} "
        f"(rotational=0){note}",
        f"{change} (e.g. {raised // MIB} MiB; weigh SSD endurance); persist: echo 'options zfs "
        f"l2arc_write_max={raised}' >> /etc/modprobe.d/zfs.conf",
        prove=ab(RULE.id, mountpoint(facts, flash[0][0]), "--bs 64k --qd 4 --rw randread", change),
    )


_FLASH_CACHE_ON_2_1 = {
    "zfs-version.txt": "zfs-2.1.11-1\nzfs-kmod-2.1.11-1\n",
    "zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
        cache
          nvme0n1
    """),
    "sys-block-queue.txt": tab_separated("/sys/block/nvme0n1/queue/rotational  0"),
}
FAILING = ({**_FLASH_CACHE_ON_2_1, "zfs-module-parameters.txt": "l2arc_write_max:8388608\n"},)  # 2.1's default
PASSING = ({**_FLASH_CACHE_ON_2_1, "zfs-module-parameters.txt": "l2arc_write_max:67108864\n"},)


RULE = Rule(
    id="L2ARC-WRITE-MAX",
    title="L2ARC fill rate at the default on a fast cache device",
    checks="flash cache vdev with l2arc_write_max at the running release's default (8 MiB to 2.2.6, 32 MiB from "
           "2.2.7/2.3.0)",
    severity="info",
    rationale="The L2ARC is fed at most l2arc_write_max per second, so a big flash cache warms slowly.",
    fix="Raise l2arc_write_max, weighing SSD endurance",
    source="https://openzfs.github.io/openzfs-docs/man/master/4/zfs.4.html#l2arc_write_max",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
