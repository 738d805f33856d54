"""KVM-CACHE: a VM disk with cache=writeback/writethrough (the host page cache on top of the ARC: double
caching) or unsafe (the guest's flushes are ignored: crit). Proxmox's default when `cache` is absent is
none; QEMU's own default, which libvirt uses when `<driver cache>` is absent, is writeback. docs/method.md: the
VM on virtio-scsi with cache=writeback did 124 4K IOPS where virtio-blk with cache=none did 3256 (the bus
changed too)."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import BLOG_QD4, in_guest
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import disk_fix


def check(facts: Facts) -> Iterator[Finding]:
    for vm in facts.vms:
        for disk in vm.disks:
            if disk.cache not in ("writeback", "writethrough", "unsafe"):
                continue
            written = f"cache={disk.cache}" if disk.cache_set else f"no cache= (QEMU's default: {disk.cache})"
            fix = disk_fix(vm, disk, f"virsh edit NAME: <driver ... cache='none'/> on {disk.key}", cache="none")
            yield RULE.finding(
                f"{vm.name} {disk.key}",
                f"{disk.key}: {disk.volume}, {written}", fix,
                prove=in_guest(RULE.id, BLOG_QD4, fix), severity="crit" if disk.cache == "unsafe" else None,
            )


RULE = Rule(
    id="KVM-CACHE",
    title="VM disk cache mode other than none",
    severity="warn",
    rationale="Host page cache on top of the ARC caches twice; unsafe ignores the guest's flushes.",
    fix="cache=none (remove the option on Proxmox)",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_cache",
    check=check,
    doc=__doc__,
    other_severities=frozenset({"crit"}),  # cache=unsafe: the guest's flushes are ignored, data is lost on a crash
)
