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
- a qcow2 image *file* (clusters are allocated as the guest writes, and a discard punches a hole in the
  file): on a file system, a Proxmox directory-like storage, or a file a QEMU network driver opens (NFS
  through libnfs, gluster, ssh). qcow2 written onto an LVM volume, a zvol, an iSCSI LUN or an NBD export
  frees clusters inside the image only: the host space stays allocated, so it is as thin as the device.

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
FILE_KINDS = ("file", "zfs-file", "btrfs-file", "netfs-file", "unknown")  # unknown: a storage-pool volume
FILE_PROTOCOLS = ("nfs", "gluster", "ssh")  # QEMU network drivers that open a file on the server
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
    if disk.image_format == "qcow2" and _holds_a_file(disk, location):
        return "qcow2 image file (clusters are allocated as the guest writes)"
    return None


def _holds_a_file(disk: VmDisk, location: DiskLocation) -> bool:
    """Whether the disk is a file somewhere (a qcow2 there gives space back), not a device the image sits on."""
    if location.kind == "network":
        return disk.protocol in FILE_PROTOCOLS or location.storage_type == "glusterfs"
    return location.kind in FILE_KINDS


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
    # qcow2 written onto a thick LVM volume: the host space is the volume's, allocated whatever the image frees
    {"libvirt/web.xml": "<domain type='kvm'><name>web</name><devices><disk type='block' device='disk'>"
                        "<driver name='qemu' type='qcow2' cache='none'/><source dev='/dev/vg0/web'/>"
                        "<target dev='vda' bus='virtio'/></disk></devices></domain>\n"},
)


RULE = Rule(
    id="KVM-DISCARD",
    title="Thin VM disk without discard",
    checks="disk on thin storage (sparse zvol, `sparse` zfspool or ZFS-over-iSCSI storage, lvmthin, btrfs, rbd, a "
           "qcow2 image file) without discard",
    severity="info",
    rationale="Blocks freed in the guest stay allocated on the host, and snapshots pin them.",
    fix="discard=on (libvirt discard='unmap'), then fstrim in the guest",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_discard",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
