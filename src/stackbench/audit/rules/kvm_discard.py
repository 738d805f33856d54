"""KVM-DISCARD: a VM disk on thin storage without discard (Proxmox `discard=on`, libvirt
`discard='unmap'`).

Without discard, blocks the guest frees (deleted files, fstrim) stay allocated on the host, and snapshots
pin them, so a thin disk only grows. Thin here means: a zvol with refreservation none/0 (sparse, as
Proxmox creates them on a zfspool storage with `sparse 1`), a Proxmox zfspool storage with `sparse` whose
zvol is not in the facts, an lvmthin storage, or a qcow2 image (clusters are allocated as the guest writes).
The live refreservation wins over storage.cfg: a zvol created before `sparse` was set is thick and is
not reported. When storage.cfg is not in the facts, a fresh Proxmox install's storages are assumed
(local-zfs is sparse) and the evidence says so.

After enabling it the guest must trim: `fstrim -av` once, then the distribution's fstrim.timer. Info: no
speed is lost, only space.
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import disk_fix


def _thin(facts, vm, disk, location):
    """Why the disk is thin, or None."""
    if location is not None and location.zvol and location.dataset:
        if location.dataset in facts.datasets:
            value = facts.dataset_prop(location.dataset, "refreservation")
            if value in ("none", "0"):
                source = facts.dataset_source(location.dataset, "refreservation")
                return f"zvol {location.dataset} refreservation={value} ({source}; zfs get): sparse"
            return None
        if location.sparse_storage:
            storage = disk.volume.split(":", 1)[0]
            if location.assumed:
                return (f"storage {storage}: storage.cfg not in the facts, a fresh Proxmox install's {storage} "
                        "(sparse 1) assumed")
            return f"storage {storage} has sparse 1 (storage.cfg)"
    if vm.kind == "proxmox" and facts.storages and ":" in disk.volume:
        storage = facts.storages.get(disk.volume.split(":", 1)[0])
        if storage is not None and storage.type == "lvmthin":
            return f"storage {storage.id} is lvmthin (storage.cfg)"
    if disk.image_format == "qcow2":
        return "qcow2 image (thin by design)"
    return None


def check(facts: Facts) -> Iterator[Finding]:
    for vm, disk, location in facts.vm_disks():
        if disk.discard:
            continue
        why = _thin(facts, vm, disk, location)
        if why is None:
            continue
        fix = disk_fix(vm, disk, f"virsh edit NAME: <driver ... discard='unmap'/> on {disk.key}", discard="on")
        yield RULE.finding(
            f"{vm.name} {disk.key}",
            f"{disk.key}: {disk.volume} without discard; {why}",
            f"{fix}; then fstrim -av in the guest (and enable fstrim.timer)",
        )


_SPARSE_ZVOL = {
    "pve/storage.cfg": "zfspool: local-zfs\n\tpool tank\n\tcontent images,rootdir\n\tsparse 1\n",
    "zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type            volume  -
        tank/vm-100-disk-0  refreservation  none    default
    """),
}
_VM = "memory: 4096\nscsihw: virtio-scsi-single\n"
FAILING = ({**_SPARSE_ZVOL, "qemu-server/100.conf": _VM + "scsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"},)
PASSING = ({**_SPARSE_ZVOL, "qemu-server/100.conf": _VM + "scsi0: local-zfs:vm-100-disk-0,discard=on,iothread=1,size=32G\n"},)


RULE = Rule(
    id="KVM-DISCARD",
    title="Thin VM disk without discard",
    severity="info",
    rationale="Blocks freed in the guest stay allocated on the host, and snapshots pin them.",
    fix="discard=on (libvirt discard='unmap'), then fstrim in the guest",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_discard",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
