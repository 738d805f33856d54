"""ARC-MAX-LE-MIN: zfs_arc_max is set but not above the effective zfs_arc_min (arcstats c_min): the max is
then ignored, e.g. on hosts with more than 256 GiB of RAM where the default min is RAM/32."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    value = facts.module_parameters.get("zfs_arc_max", "0").strip()
    c_min = facts.arcstats.get("c_min")
    if value.isdigit() and int(value) != 0 and c_min is not None and int(value) <= c_min:
        yield Finding(
            "ARC-MAX-LE-MIN", "warn", "zfs_arc_max", f"zfs_arc_max={value} <= c_min={c_min}",
            "also set options zfs zfs_arc_min=<below the max> in /etc/modprobe.d/zfs.conf",
        )


RULE = Rule(
    "ARC-MAX-LE-MIN", "ARC maximum not above the minimum", "warn",
    "ZFS ignores a zfs_arc_max at or below zfs_arc_min.",
    "Set zfs_arc_min below zfs_arc_max",
    "https://pve.proxmox.com/wiki/ZFS_on_Linux#sysadmin_zfs_limit_memory_usage", check, doc=__doc__,
)
