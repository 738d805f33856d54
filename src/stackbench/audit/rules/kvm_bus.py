"""KVM-BUS: a data disk on an emulated controller: ide or sata, or scsi behind lsi (the Proxmox backend
default when scsihw is absent), lsi53c810, megasas or pvscsi (libvirt: lsilogic, lsisas1068, lsisas1078,
vmpvscsi, ibmvscsi). Proxmox calls VirtIO SCSI or VirtIO Block "highly recommended"."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import BLOG_QD4, in_guest
from stackbench.audit.rule import Finding, Rule

EMULATED_SCSI = ("lsi", "lsi53c810", "megasas", "pvscsi", "lsilogic", "lsisas1068", "lsisas1078", "vmpvscsi",
                 "ibmvscsi", "am53c974", "dc390")


def check(facts: Facts) -> Iterator[Finding]:
    for vm in facts.vms:
        for disk in vm.disks:
            emulated_scsi = disk.bus == "scsi" and disk.controller in EMULATED_SCSI
            if disk.bus in ("ide", "sata") or emulated_scsi:
                where = f"{disk.key} on {disk.bus}" + (f" with controller {disk.controller}" if emulated_scsi else "")
                fix = vm.fix("qm set VMID --scsihw virtio-scsi-single, then move the disk to scsiN or virtioN",
                             "virsh edit NAME: <target bus='virtio'/> or a virtio-scsi controller")
                yield RULE.finding(f"{vm.name} {disk.key}", f"{where}: {disk.volume}", fix,
                                   prove=in_guest(RULE.id, BLOG_QD4, fix))


FAILING = (
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\nsata0: local-zfs:vm-100-disk-0,size=32G\n"},
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\nscsi0: local-zfs:vm-100-disk-0,size=32G\n"},  # lsi: no scsihw
)
PASSING = (
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\nscsihw: virtio-scsi-single\n"
                             "scsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"},
)


RULE = Rule(
    id="KVM-BUS",
    title="Disk on an emulated controller",
    severity="warn",
    rationale="Emulated IDE/SATA/LSI controllers cost CPU per I/O and cap IOPS.",
    fix="Use VirtIO SCSI (virtio-scsi-single) or VirtIO Block",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_bus",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
