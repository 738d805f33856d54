"""KVM-IOTHREAD-IGNORED: a SCSI disk has iothread=1 but scsihw is not virtio-scsi-single: qemu-server logs
"iothread is only valid with virtio disk or virtio-scsi-single controller, ignoring"."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._vm import disks


def check(facts):
    for vm, config in facts.vm_configs.items():
        scsihw = config.get("scsihw", "lsi")
        for key, volume, options in disks(config):
            if key.startswith("scsi") and options.get("iothread") == "1" and scsihw != "virtio-scsi-single":
                yield Finding("KVM-IOTHREAD-IGNORED", "warn", f"{vm} {key}", f"{key} iothread=1 with scsihw {scsihw}",
                              "qm set VMID --scsihw virtio-scsi-single")


RULE = Rule(
    "KVM-IOTHREAD-IGNORED", "iothread set but ignored", "warn",
    "The option silently does nothing with this controller.",
    "scsihw: virtio-scsi-single",
    "https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_iothread", check, doc=__doc__,
)
