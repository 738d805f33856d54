"""ARC-SMALL: the ARC's cap (arcstats c_max) is below Proxmox's rule of thumb, 2 GiB plus 1 GiB per TiB of
pool storage.

RAM is "the most effective tuning knob" (OpenZFS caching docs): a small ARC sends reads to the disks that
a bigger one would serve from memory. The threshold is a heuristic, not a limit (knowledge base, section 3),
so the finding is info. Pool size is what `zpool list` reports (raw, parity included), summed over pools:
one ARC serves them all.

The cap is the live c_max: zfs_arc_max when set, else the release's default (1/2 RAM before OpenZFS 2.3,
max(RAM - 1 GiB, 5/8 RAM) from 2.3.0; Proxmox VE 8.1+ installs set 10 % of RAM). Raising it must leave
room for the VMs (ARC-OVERCOMMIT): the evidence says when RAM does not allow it.
"""

import math
from typing import Iterator

from stackbench.audit.examples import kstat, tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.prove import ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.versions import describe_arc_default

GIB, TIB = 1024**3, 1024**4
HOST_RESERVE = 2 * GIB


def _pool_sizes(facts):
    if facts.pool_sizes:
        return dict(facts.pool_sizes)
    return {pool: int(props["size"]) for pool, props in facts.pools.items() if props.get("size", "").isdigit()}


def check(facts: Facts) -> Iterator[Finding]:
    c_max = facts.arcstats.get("c_max")
    sizes = _pool_sizes(facts)
    if not c_max or not sizes:
        return
    storage = sum(sizes.values())
    wanted = 2 * GIB + math.ceil(storage / TIB * GIB)
    if c_max >= wanted:
        return
    configured = facts.module_parameters.get("zfs_arc_max", "0").strip()
    cap = f"zfs_arc_max={configured}" if configured not in ("0", "") else describe_arc_default(facts.version)
    room = ""
    total = facts.meminfo.get("MemTotal")
    if total:
        free_for_arc = total - sum(vm.memory_bytes or 0 for vm in facts.vms) - HOST_RESERVE
        room = (f"; RAM allows it (MemTotal {total / GIB:.1f} GiB)" if free_for_arc >= wanted else
                f"; RAM does not allow it: MemTotal {total / GIB:.1f} GiB leaves {max(0, free_for_arc) / GIB:.1f} GiB "
                "after VMs and 2 GiB for the host: add RAM first")
    change = f"echo {wanted} > /sys/module/zfs/parameters/zfs_arc_max"
    largest = max(sizes, key=sizes.get)
    yield RULE.finding(
        "ARC",
        f"c_max {c_max / GIB:.2f} GiB ({cap}; arcstats) < 2 GiB + 1 GiB/TiB x {storage / TIB:.2f} TiB of pools "
        f"(zpool list) = {wanted / GIB:.2f} GiB{room}",
        f"{change}; persist: echo 'options zfs zfs_arc_max={wanted}' >> /etc/modprobe.d/zfs.conf; update-initramfs -u",
        prove=ab(RULE.id, mountpoint(facts, largest), "--bs 4k --qd 4 --rw randread", change),
    )


_TWO_TIB_POOL = tab_separated(f"tank  size  {2 * TIB}  -")  # wants 2 GiB + 2 x 1 GiB of ARC
FAILING = ({"zpool-get-Hp-all.txt": _TWO_TIB_POOL, "arcstats.txt": kstat(c_max=1 * GIB)},)
PASSING = ({"zpool-get-Hp-all.txt": _TWO_TIB_POOL, "arcstats.txt": kstat(c_max=8 * GIB)},)


RULE = Rule(
    id="ARC-SMALL",
    title="ARC smaller than the rule of thumb",
    checks="c_max below 2 GiB + 1 GiB per TiB of pools (Proxmox's rule of thumb)",
    severity="info",
    rationale="RAM is the most effective tuning knob; Proxmox suggests 2 GiB plus 1 GiB per TiB of storage.",
    fix="Raise zfs_arc_max if RAM allows",
    source="https://pve.proxmox.com/pve-docs/chapter-sysadmin.html#sysadmin_zfs_limit_memory_usage",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
