"""KVM-IOTHREAD-MISSING: a virtio disk, or a SCSI disk under virtio-scsi-single, without an I/O thread
(libvirt: none of the forms libvirt accepts, `iothread=` or an `<iothreads>` mapping, on the disk's driver or
on its virtio-scsi controller's). Disk I/O then runs in QEMU's main loop;
docs/method.md measured +23 % 4K IOPS with an iothread (3256 to 4011). A Proxmox SCSI disk on the shared
`virtio-scsi-pci` controller (the default before Proxmox VE 7.3) cannot have one at all: the advice is to
switch the VM to `virtio-scsi-single` and set iothread=1 on the disk. vhost-user disks are left alone: their
I/O is done by the process behind the socket, not by QEMU."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import RAND_4K_WRITE, in_guest
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import DiskChange, DiskIssue, vm_findings


# SCSI controllers whose disks can have their own I/O thread: Proxmox only with one controller per disk
# (virtio-scsi-single); libvirt gives the virtio-scsi controller itself an iothread.
THREADED_SCSI = {"proxmox": ("virtio-scsi-single",), "libvirt": ("virtio-scsi-single", "virtio-scsi")}
LIBVIRT = "<iothreads>1</iothreads> and <driver ... iothread='1'/> on {disks}"


def check(facts: Facts) -> Iterator[Finding]:
    issues = []
    for vm in facts.vms:
        for disk in vm.disks:
            if disk.iothread or disk.source_type in ("vhostuser", "vhostvdpa"):
                continue
            eligible = disk.bus == "virtio" or (disk.bus == "scsi" and disk.controller in THREADED_SCSI[vm.kind])
            shared = vm.kind == "proxmox" and disk.bus == "scsi" and disk.controller == "virtio-scsi-pci"
            if shared:
                issues.append((vm, DiskIssue(
                    disk, f"{disk.key}: {disk.volume} on scsihw virtio-scsi-pci, which cannot give a disk its own "
                          "I/O thread",
                    DiskChange(vm_options={"scsihw": "virtio-scsi-single"}, drive={"iothread": "1"}))))
            elif eligible:
                issues.append((vm, DiskIssue(disk, f"{disk.key}: {disk.volume} without iothread",
                                             DiskChange(drive={"iothread": "1"}, libvirt=LIBVIRT))))
    yield from vm_findings(RULE, issues, prove=lambda fix: in_guest(RULE.id, RAND_4K_WRITE, fix))


def _vm(lines: str) -> dict[str, str]:
    return {"qemu-server/100.conf": "cores: 4\nmemory: 4096\n" + lines}


FAILING = (
    _vm("virtio0: local-zfs:vm-100-disk-0,size=32G\n"),
    _vm("scsihw: virtio-scsi-pci\nscsi0: local-zfs:vm-100-disk-0,size=32G\n"),  # a shared controller: no own thread
)
PASSING = (
    _vm("virtio0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"),
    _vm("scsihw: virtio-scsi-single\nscsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"),
)


RULE = Rule(
    id="KVM-IOTHREAD-MISSING",
    title="VirtIO disk without an I/O thread",
    checks="virtio disk or scsi under virtio-scsi-single (libvirt: virtio-scsi) without an iothread in any form "
           "(disk or controller, attribute or mapping); vhost-user disks excepted",
    severity="info",
    rationale="Disk I/O shares the main loop with everything else QEMU does.",
    fix="iothread=1 on the disk",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_iothread",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
