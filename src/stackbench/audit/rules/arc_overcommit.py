"""ARC-OVERCOMMIT: ARC c_max plus the memory of every VM plus a host reserve (2 GiB) exceeds MemTotal:
ARC and VMs compete for RAM (METHOD.md limited the ARC to 12 of 32 GiB)."""

from stackbench.audit.rule import Finding, Rule

HOST_RESERVE = 2 * 1024**3


def check(facts):
    c_max = facts.arcstats.get("c_max")
    total = facts.meminfo.get("MemTotal")
    vm_bytes = sum(int(c.get("memory", "512")) * 1024**2 for c in facts.vm_configs.values() if c.get("memory", "512").isdigit())
    if c_max and total and facts.vm_configs and c_max + vm_bytes + HOST_RESERVE > total:
        gib = 1024**3
        yield Finding(
            "ARC-OVERCOMMIT", "warn", "ARC",
            f"c_max {c_max / gib:.1f} GiB + VMs {vm_bytes / gib:.1f} GiB + 2 GiB > MemTotal {total / gib:.1f} GiB",
            "options zfs zfs_arc_max=<bytes> in /etc/modprobe.d/zfs.conf, then update-initramfs -u",
        )


RULE = Rule(
    "ARC-OVERCOMMIT", "ARC and VMs together exceed RAM", "warn",
    "The ARC shrinks late; VMs then swap or the OOM killer steps in.",
    "Cap the ARC with zfs_arc_max",
    "https://pve.proxmox.com/wiki/ZFS_on_Linux#sysadmin_zfs_limit_memory_usage", check, doc=__doc__,
)
