"""KVM-IOTHREAD-IGNORED: a Proxmox SCSI disk has iothread=1 but scsihw is not virtio-scsi-single:
qemu-server logs "iothread is only valid with virtio disk or virtio-scsi-single controller, ignoring"."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import DiskChange, DiskIssue, vm_findings

CONTROLLER = DiskChange(vm_options={"scsihw": "virtio-scsi-single"})


def check(facts: Facts) -> Iterator[Finding]:
    issues = []
    for vm in facts.vms:
        for disk in vm.disks:
            if vm.kind == "proxmox" and disk.bus == "scsi" and disk.iothread and disk.controller != "virtio-scsi-single":
                default = f" ({disk.controller_default})" if disk.controller_default else ""
                issues.append((vm, DiskIssue(disk, f"{disk.key}: iothread=1 with scsihw {disk.controller}{default}",
                                             CONTROLLER)))
    yield from vm_findings(RULE, issues)


def _vm(scsihw: str) -> dict[str, str]:
    return {"qemu-server/100.conf": f"memory: 4096\nscsihw: {scsihw}\nscsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"}


FAILING = (_vm("virtio-scsi-pci"),)
PASSING = (_vm("virtio-scsi-single"),)


RULE = Rule(
    id="KVM-IOTHREAD-IGNORED",
    title="iothread set but ignored",
    checks="iothread=1 on scsi with a controller other than virtio-scsi-single",
    severity="warn",
    rationale="The option silently does nothing with this controller.",
    fix="scsihw: virtio-scsi-single",
    source="https://github.com/proxmox/qemu-server/blob/master/src/PVE/QemuServer.pm",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
