"""ARC-OVERCOMMIT: the ARC's cap (arcstats c_max) plus the memory of every VM plus a 2 GiB host reserve
exceeds MemTotal: ARC and VMs compete for RAM (docs/method.md capped the ARC at 12 of 32 GiB). With
zfs_arc_max=0 the cap is the release default: 1/2 RAM before OpenZFS 2.3, max(RAM - 1 GiB, 5/8 RAM) from
2.3.0; new Proxmox VE 8.1+ installs set 10 % of RAM (at most 16 GiB)."""

from typing import Iterator

from stackbench.audit.examples import kstat
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.versions import describe_arc_default

HOST_RESERVE = 2 * 1024**3
GIB = 1024**3


def check(facts: Facts) -> Iterator[Finding]:
    c_max = facts.arcstats.get("c_max")
    total = facts.meminfo.get("MemTotal")
    vm_bytes = sum(vm.memory_bytes or 0 for vm in facts.vms)
    if not (c_max and total and facts.vms) or c_max + vm_bytes + HOST_RESERVE <= total:
        return
    configured = facts.module_parameters.get("zfs_arc_max", "0").strip()
    cap = f"zfs_arc_max={configured}" if configured not in ("0", "") else describe_arc_default(facts.version)
    suggested = max(GIB, total - vm_bytes - HOST_RESERVE)
    yield RULE.finding(
        "ARC",
        f"c_max {c_max / GIB:.1f} GiB ({cap}) + {len(facts.vms)} VMs {vm_bytes / GIB:.1f} GiB + 2 GiB host "
        f"> MemTotal {total / GIB:.1f} GiB",
        f"echo 'options zfs zfs_arc_max={suggested}' >> /etc/modprobe.d/zfs.conf; update-initramfs -u "
        f"(takes effect now with: echo {suggested} > /sys/module/zfs/parameters/zfs_arc_max)",
    )


_ARC_8G_AND_AN_8G_VM = {
    "arcstats.txt": kstat(c_max=8 * GIB),
    "qemu-server/100.conf": "cores: 4\nmemory: 8192\nscsi0: local-zfs:vm-100-disk-0,size=32G\n",
}
FAILING = ({**_ARC_8G_AND_AN_8G_VM, "meminfo.txt": f"MemTotal:       {16 * GIB // 1024} kB\n"},)
PASSING = ({**_ARC_8G_AND_AN_8G_VM, "meminfo.txt": f"MemTotal:       {32 * GIB // 1024} kB\n"},)


RULE = Rule(
    id="ARC-OVERCOMMIT",
    title="ARC and VMs together exceed RAM",
    checks="ARC c_max + VM memory + 2 GiB reserve > MemTotal",
    severity="warn",
    rationale="The ARC gives memory back late; VMs then swap or the OOM killer steps in.",
    fix="Cap the ARC with zfs_arc_max",
    source="https://pve.proxmox.com/pve-docs/chapter-sysadmin.html#sysadmin_zfs_limit_memory_usage",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
