"""KVM-DISCARD: a VM disk on thin storage without discard (Proxmox `discard=on`, libvirt
`discard='unmap'`).

Without discard, blocks the guest frees (deleted files, fstrim) stay allocated on the host, and snapshots
pin them, so a thin disk only grows. Thin here means, by what is under the disk (audit.storage):

- a zvol with refreservation none/0 (sparse, as Proxmox creates them on a zfspool storage with `sparse 1`),
  or a zfspool storage with `sparse` whose zvol is not in the facts; the live refreservation wins over
  storage.cfg (a zvol created before `sparse` was set is thick and is not reported);
- an lvmthin storage; a btrfs storage (raw images are sparse files in subvolumes); an rbd storage or a
  libvirt rbd network disk (RBD images are thin-provisioned, and "a guest can send TRIM requests to let a
  Ceph block device reclaim unused space", https://docs.ceph.com/en/latest/rbd/qemu-rbd/#enabling-discard-trim);
  ZFS over iSCSI with `sparse`. Proxmox: every storage type with snapshots supports thin provisioning
  (https://pve.proxmox.com/pve-docs/chapter-pvesm.html, Thin Provisioning);
- a qcow2 image on any storage (clusters are allocated as the guest writes).

Other storages (lvm, plain directories with raw files, NFS/CIFS raw files, iSCSI LUNs) are not thin in
Proxmox's table and are not reported; a storage the facts do not describe is not either (only its qcow2
images are). When storage.cfg is not in the facts, a fresh Proxmox install's storages are assumed
(local-zfs is sparse) and the evidence says so.

After enabling it the guest must trim: `fstrim -av` once, then the distribution's fstrim.timer. Info: no
speed is lost, only space. One finding per VM, one `qm set` for all its disks.
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import DiskChange, DiskIssue, vm_findings
from stackbench.audit.storage import DiskLocation
from stackbench.audit.vm import VmDisk

TRIM = "then fstrim -av in the guest (and enable fstrim.timer)"
THIN_BY_TYPE = {"lvmthin": "lvmthin", "btrfs": "btrfs (raw images are sparse files in subvolumes)",
                "rbd": "rbd (RBD images are thin-provisioned)"}


def _thin(facts: Facts, disk: VmDisk, location: DiskLocation) -> str | None:
    """Why the disk is thin, or None."""
    if location.zvol and location.dataset and location.dataset in facts.datasets:
        value = facts.dataset_prop(location.dataset, "refreservation")
        if value in ("none", "0"):
            source = facts.dataset_source(location.dataset, "refreservation")
            return f"zvol {location.dataset} refreservation={value} ({source}; zfs get): sparse"
        return None
    if location.sparse_storage and location.storage:
        storage = location.storage.id
        said = (f"storage.cfg not in the facts, a fresh Proxmox install's {storage} assumed" if location.assumed
                else "storage.cfg")
        return f"storage {storage} ({location.storage_type}) has sparse 1 ({said})"
    if location.storage_type in THIN_BY_TYPE:
        return f"storage {location.storage.id} is {THIN_BY_TYPE[location.storage_type]}"
    if location.kind == "librbd":
        return f"{location.where}: RBD images are thin-provisioned"
    if disk.image_format == "qcow2":
        return "qcow2 image (thin by design)"
    return None


def check(facts: Facts) -> Iterator[Finding]:
    issues = []
    for vm, disk, location in facts.vm_disks():
        if disk.discard:
            continue
        why = _thin(facts, disk, location)
        if why is not None:
            issues.append((vm, DiskIssue(disk, f"{disk.key}: {disk.volume} without discard; {why}",
                                         DiskChange(drive={"discard": "on"},
                                                    libvirt="<driver ... discard='unmap'/> on {disks}"))))
    yield from vm_findings(RULE, issues, after=TRIM)


_SPARSE_ZVOL = {
    "pve/storage.cfg": "zfspool: local-zfs\n\tpool tank\n\tcontent images,rootdir\n\tsparse 1\n",
    "zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type            volume  -
        tank/vm-100-disk-0  refreservation  none    default
    """),
}
_VM = "memory: 4096\nscsihw: virtio-scsi-single\n"
_CEPH = {"pve/storage.cfg": "rbd: ceph\n\tpool vms\n\tcontent images\n"}
FAILING = (
    {**_SPARSE_ZVOL, "qemu-server/100.conf": _VM + "scsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"},
    {**_CEPH, "qemu-server/100.conf": _VM + "scsi0: ceph:vm-100-disk-0,iothread=1,size=32G\n"},  # RBD: thin
)
PASSING = (
    {**_SPARSE_ZVOL, "qemu-server/100.conf": _VM + "scsi0: local-zfs:vm-100-disk-0,discard=on,iothread=1,size=32G\n"},
    {**_CEPH, "qemu-server/100.conf": _VM + "scsi0: ceph:vm-100-disk-0,discard=on,iothread=1,size=32G\n"},
    {"pve/storage.cfg": "lvm: vg\n\tvgname vg0\n\tcontent images\n",  # thick LVM: nothing to reclaim
     "qemu-server/100.conf": _VM + "scsi0: vg:vm-100-disk-0,iothread=1,size=32G\n"},
)


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
