"""KVM-BUS: a data disk on an emulated controller (ide, sata, or scsi behind lsi/megasas/pvscsi; lsi is
the backend default when scsihw is absent). VirtIO SCSI or VirtIO Block is highly recommended."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._vm import disks

EMULATED_SCSI = ("lsi", "lsi53c810", "megasas", "pvscsi")


def check(facts):
    for vm, config in facts.vm_configs.items():
        scsihw = config.get("scsihw", "lsi")
        for key, volume, _ in disks(config):
            if key.startswith(("ide", "sata")) or (key.startswith("scsi") and scsihw in EMULATED_SCSI):
                where = key if not key.startswith("scsi") else f"{key} with scsihw {scsihw}"
                yield Finding(
                    "KVM-BUS", "warn", f"{vm} {key}", f"{where}: {volume}",
                    "scsihw: virtio-scsi-single with scsiN, or virtioN",
                    prove="stackbench run inside the guest before and after, then stackbench compare",
                )


RULE = Rule(
    "KVM-BUS", "Disk on an emulated controller", "warn",
    "Emulated IDE/SATA/LSI controllers cost CPU per I/O and cap IOPS.",
    "Use VirtIO SCSI (virtio-scsi-single) or VirtIO Block",
    "https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_bus", check, doc=__doc__,
)
