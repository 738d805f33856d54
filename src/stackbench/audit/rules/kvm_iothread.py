"""KVM-IOTHREAD-MISSING: a virtio disk, or a SCSI disk under virtio-scsi-single, without iothread=1. I/O
then runs in QEMU's main loop (METHOD.md: +23 % 4K IOPS with an iothread)."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._vm import disks


def check(facts):
    for vm, config in facts.vm_configs.items():
        single = config.get("scsihw") == "virtio-scsi-single"
        for key, volume, options in disks(config):
            eligible = key.startswith("virtio") or (key.startswith("scsi") and single)
            if eligible and options.get("iothread") != "1":
                yield Finding(
                    "KVM-IOTHREAD-MISSING", "info", f"{vm} {key}", f"{key}: {volume} without iothread=1",
                    f"qm set VMID --{key} {volume},iothread=1",
                    prove="stackbench run inside the guest before and after, then stackbench compare",
                )


RULE = Rule(
    "KVM-IOTHREAD-MISSING", "VirtIO disk without an I/O thread", "info",
    "Disk I/O shares the main loop with everything else QEMU does.",
    "iothread=1 on the disk",
    "https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_iothread", check, doc=__doc__,
)
