"""KVM-IOTHREAD-IGNORED: a Proxmox SCSI disk has iothread=1 but scsihw is not virtio-scsi-single:
qemu-server logs "iothread is only valid with virtio disk or virtio-scsi-single controller, ignoring"."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for vm in facts.vms:
        for disk in vm.disks:
            if vm.kind == "proxmox" and disk.bus == "scsi" and disk.iothread and disk.controller != "virtio-scsi-single":
                yield Finding("KVM-IOTHREAD-IGNORED", "warn", f"{vm.name} {disk.key}",
                              f"{disk.key}: iothread=1 with scsihw {disk.controller}",
                              vm.fix("qm set VMID --scsihw virtio-scsi-single", ""))


RULE = Rule(
    "KVM-IOTHREAD-IGNORED", "iothread set but ignored", "warn",
    "The option silently does nothing with this controller.",
    "scsihw: virtio-scsi-single",
    "https://github.com/proxmox/qemu-server/blob/master/src/PVE/QemuServer.pm", check, doc=__doc__,
)
