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


def _vm(scsi0: str) -> dict[str, str]:
    return {"qemu-server/100.conf": f"cores: 4\nmemory: 4096\nscsihw: virtio-scsi-single\nscsi0: {scsi0}\n"}


FAILING = (
    _vm("local-zfs:vm-100-disk-0,cache=writeback,iothread=1,size=32G"),
    _vm("local-zfs:vm-100-disk-0,cache=unsafe,iothread=1,size=32G"),  # crit
    # libvirt without a cache attribute: QEMU's default, writeback
    {"libvirt/web.xml": "<domain type='kvm'><name>web</name><memory unit='GiB'>4</memory><devices>"
                        "<disk type='block' device='disk'><driver name='qemu' type='raw'/>"
                        "<source dev='/dev/zvol/tank/web'/><target dev='vda' bus='virtio'/></disk>"
                        "</devices></domain>\n"},
)
PASSING = (_vm("local-zfs:vm-100-disk-0,iothread=1,size=32G"),)  # Proxmox's default: cache=none


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
    failing=FAILING,
    passing=PASSING,
)
