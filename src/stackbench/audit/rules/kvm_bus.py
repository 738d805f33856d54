"""KVM-BUS: a data disk on an emulated controller: ide or sata, a USB mass-storage or SD card disk (libvirt
bus usb, sd), or scsi behind lsi (the Proxmox backend default when scsihw is absent), lsi53c810, megasas or
pvscsi (libvirt: lsilogic, lsisas1068, lsisas1078, vmpvscsi, ibmvscsi). A libvirt SCSI disk whose controller
names no model (or that has no controller at all) gets the one libvirt fills in for the machine type
(`vm.implicit_scsi_model`): lsilogic on x86, spapr-vscsi on pseries, virtio-scsi on s390x; on Arm and
RISC-V `virt` machines the model depends on how the domain was defined, so the disk is not judged. Proxmox
calls VirtIO SCSI or VirtIO Block "highly recommended".

The controller belongs to the VM, so its disks are one finding with one fix: `qm set VMID --scsihw
virtio-scsi-single` once for all its SCSI disks; disks on ide/sata are listed with the manual move."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import BLOG_QD4, in_guest
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import DiskChange, DiskIssue, vm_findings

EMULATED_SCSI = ("lsi", "lsi53c810", "megasas", "pvscsi", "lsilogic", "lsisas1068", "lsisas1078", "vmpvscsi",
                 "ibmvscsi", "am53c974", "dc390")
EMULATED_BUSES = ("ide", "sata", "usb", "sd")  # usb: QEMU's usb-storage; sd: an emulated SD card
LIBVIRT = "<target bus='virtio'/> on {disks}, or a virtio-scsi controller for them"
# The controller is the VM's: one `--scsihw` for all its SCSI disks. A disk on ide/sata changes bus by hand:
# detach it (it becomes unusedN) and add that volume again as virtioN or scsiN; the guest needs the drivers first.
CONTROLLER = DiskChange(vm_options={"scsihw": "virtio-scsi-single"}, libvirt=LIBVIRT)
MOVE = DiskChange(manual="move {disks} to virtioN, or to scsiN under scsihw virtio-scsi-single (detach, then add "
                         "the unused disk on the new bus; the guest needs VirtIO drivers first)", libvirt=LIBVIRT)


def check(facts: Facts) -> Iterator[Finding]:
    issues = []
    for vm in facts.vms:
        for disk in vm.disks:
            if disk.bus == "scsi" and disk.controller in EMULATED_SCSI:
                default = f" ({disk.controller_default})" if disk.controller_default else ""
                issues.append((vm, DiskIssue(disk, f"{disk.key} on scsi with controller {disk.controller}{default}: "
                                                   f"{disk.volume}", CONTROLLER)))
            elif disk.bus in EMULATED_BUSES:
                issues.append((vm, DiskIssue(disk, f"{disk.key} on {disk.bus}: {disk.volume}", MOVE)))
    yield from vm_findings(RULE, issues, prove=lambda fix: in_guest(RULE.id, BLOG_QD4, fix))


def _domain(arch: str, machine: str, target: str) -> dict[str, str]:
    return {"libvirt/web.xml": f"<domain type='kvm'><name>web</name><os><type arch='{arch}' machine='{machine}'>hvm"
                               "</type></os><devices><disk type='block' device='disk'><driver name='qemu' "
                               f"type='raw' cache='none'/><source dev='/dev/vg0/web'/>{target}</disk></devices>"
                               "</domain>\n"}


FAILING = (
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\nsata0: local-zfs:vm-100-disk-0,size=32G\n"},
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\nscsi0: local-zfs:vm-100-disk-0,size=32G\n"},  # lsi: no scsihw
    _domain("x86_64", "pc-q35-8.2", "<target dev='sda' bus='scsi'/>"),  # no controller: libvirt adds lsilogic
    _domain("x86_64", "pc-q35-8.2", "<target dev='sda' bus='usb'/>"),  # USB mass storage
)
PASSING = (
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\nscsihw: virtio-scsi-single\n"
                             "scsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"},
    _domain("s390x", "s390-ccw-virtio", "<target dev='sda' bus='scsi'/>"),  # libvirt adds virtio-scsi on s390x
)


RULE = Rule(
    id="KVM-BUS",
    title="Disk on an emulated controller",
    checks="disks on ide/sata, USB mass storage or SD, or scsi behind an emulated controller (also the one libvirt "
           "adds: lsilogic on x86, spapr-vscsi on pseries)",
    severity="warn",
    rationale="Emulated IDE/SATA/LSI controllers cost CPU per I/O and cap IOPS.",
    fix="Use VirtIO SCSI (virtio-scsi-single) or VirtIO Block",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_bus",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
