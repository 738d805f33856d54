"""ARC-MAX-LE-MIN: zfs_arc_max is set but not above the effective zfs_arc_min (arcstats c_min): the max is
then ignored, e.g. on hosts with more than 256 GiB of RAM where the default min is RAM/32."""

from typing import Iterator

from stackbench.audit.examples import kstat
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    value = facts.module_parameters.get("zfs_arc_max", "0").strip()
    c_min = facts.arcstats.get("c_min")
    if value.isdigit() and int(value) != 0 and c_min is not None and int(value) <= c_min:
        yield RULE.finding(
            "zfs_arc_max", f"zfs_arc_max={value} <= c_min={c_min}",
            "also set options zfs zfs_arc_min=<below the max> in /etc/modprobe.d/zfs.conf",
        )


FAILING = (
    {"zfs-module-parameters.txt": "zfs_arc_max:1073741824\n", "arcstats.txt": kstat(c_min=2147483648)},
)
PASSING = (
    {"zfs-module-parameters.txt": "zfs_arc_max:4294967296\n", "arcstats.txt": kstat(c_min=2147483648)},
)


RULE = Rule(
    id="ARC-MAX-LE-MIN",
    title="ARC maximum not above the minimum",
    checks="zfs_arc_max set but not above c_min",
    severity="warn",
    rationale="ZFS ignores a zfs_arc_max at or below zfs_arc_min.",
    fix="Set zfs_arc_min below zfs_arc_max",
    source="https://pve.proxmox.com/wiki/ZFS_on_Linux#sysadmin_zfs_limit_memory_usage",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
