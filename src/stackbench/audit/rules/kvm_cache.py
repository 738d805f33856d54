"""KVM-CACHE: a VM disk whose cache mode is wrong for the storage under it. What is wrong depends on the
storage, so each disk is judged by where it lives (audit.storage: the Proxmox storage's type from
storage.cfg, or the libvirt disk's source), with the mode QEMU really runs (Proxmox without `cache`: none,
except on a btrfs storage without `nocow`, where qemu-server leaves QEMU's default, writeback; libvirt
without `<driver cache>`: QEMU's default, writeback).

Branches, with their sources:

- Any storage, cache=unsafe: crit. QEMU ignores the guest's flushes, so what the guest made durable is lost
  when the host crashes. https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_cache, QEMU's
  `-drive cache=` (https://www.qemu.org/docs/master/system/invocation.html)
- zvol (zfspool storage; libvirt /dev/zvol/..., /dev/zdN): writeback or writethrough: warn. A zvol opened
  without O_DIRECT goes through the Linux page cache, and every block is in the ARC as well: the same data
  twice in host RAM, and page cache and ARC competing for it; O_DIRECT (cache=none, Proxmox's default)
  bypasses the page cache while the ARC still caches (openzfs/zfs#9986, #12483).
  https://github.com/openzfs/zfs/issues/9986
- Image file on ZFS (a dir storage whose path is on a ZFS dataset, a libvirt file there): nothing. ZFS's
  file reads and writes go to the ARC and never through the page cache (zfs_read uses the page cache only
  for mmap'ed files), so writeback does not cache twice; and from OpenZFS 2.3 cache=none's O_DIRECT makes
  aligned I/O bypass the ARC, so "cache=none" would be the change that loses caching there.
  https://github.com/openzfs/zfs/blob/zfs-2.3.0/module/zfs/zfs_vnops.c
- btrfs (a btrfs storage, or a file on a btrfs mount per mounts.txt), cache=none or directsync: crit.
  Proxmox: "BTRFS will honor the O_DIRECT flag when opening files, meaning VMs should not use cache mode
  none, otherwise there will be checksum errors" (a storage with `nocow` has no data checksums: nothing).
  https://pve.proxmox.com/pve-docs/chapter-pvesm.html#storage_btrfs
- Ceph RBD through librbd (rbd storage without krbd; libvirt <source protocol='rbd'>): nothing, whatever
  the mode but unsafe. Since QEMU 1.2 the cache mode sets librbd's own cache (writeback: rbd_cache=true;
  none: off), which honours flushes "just as safe as a well-behaved physical hard disk"; Ceph recommends
  writeback ("RBD caching can significantly improve performance").
  https://docs.ceph.com/en/latest/rbd/qemu-rbd/#qemu-cache-options,
  https://docs.ceph.com/en/latest/rbd/rbd-config-ref/
- rbd with `krbd 1`, lvm, lvmthin, kernel iSCSI, passed-through disks: nothing. QEMU opens a host block
  device; writeback uses the host page cache as for any block device (Ceph: the kernel driver "can use the
  Linux page cache"), with no ARC under it, and the guest's flushes are honoured.
- NFS, CIFS, CephFS: nothing; the host page cache is the NFS/SMB client's; an ARC, if any, is the
  server's, in another machine's RAM. iscsidirect, ZFS over iSCSI, glusterfs: nothing; QEMU's own network
  drivers (libiscsi, libgfapi) have no host page cache.
- A libvirt `<shareable/>` disk (not `<readonly/>`) in a mode that caches on the host (writeback,
  writethrough, unsafe, or no cache=, QEMU's writeback): warn. libvirt: shareable "indicates the device is
  expected to be shared between domains ..., which means that caching should be deactivated for that
  device"; a guest on another host reads what its own host cached, not what the others wrote.
  https://libvirt.org/formatdomain.html#hard-drives-floppy-disks-cdroms
- Disks that are no host file or block device (NFS through libnfs, NBD, iSCSI through libiscsi, a PCI
  NVMe device, vhost-user): no page cache on this host to double, nothing but unsafe is reported.
- Unknown storage (not in storage.cfg; storage.cfg not in the facts and not a storage a fresh install has;
  a libvirt storage-pool volume): writeback or writethrough is info, not warn, and the evidence says the
  storage is unknown: it caches twice only if a zvol is under it. Without storage.cfg, a fresh install's
  `local-zfs` (zfspool rpool/data) and `local` (dir /var/lib/vz) are assumed and the evidence says so.

docs/method.md: the VM on virtio-scsi with cache=writeback did 124 4K IOPS where virtio-blk with cache=none
did 3256 (the bus changed too), on a zvol.
"""

from __future__ import annotations

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import BLOG_QD4, in_guest
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import DiskChange, DiskIssue, effective_cache, vm_findings
from stackbench.audit.storage import DiskLocation
from stackbench.audit.vm import Vm, VmDisk

BTRFS_QUOTE = "Proxmox: btrfs honours O_DIRECT, \"VMs should not use cache mode none, otherwise there will be checksum errors\""
SHAREABLE_QUOTE = ("a shareable disk: libvirt says caching \"should be deactivated for that device\"; a guest on another "
                   "host would read what this host cached")


def _set_cache(mode: str) -> DiskChange:
    return DiskChange(drive={"cache": mode}, libvirt=f"<driver ... cache='{mode}'/> on {{disks}}")


def _judge(vm: Vm, disk: VmDisk, location: DiskLocation) -> DiskIssue | None:
    cache, written = effective_cache(vm, disk, location)
    said = f"{disk.key}: {disk.volume}, {written}; {location.where}"
    btrfs_checksummed = location.kind == "btrfs-file" and not (location.storage and location.storage.flag("nocow"))
    if cache == "unsafe":
        safe = "writeback" if location.kind in ("librbd", "btrfs-file") else "none"
        return DiskIssue(disk, f"{said}: the guest's flushes are ignored", _set_cache(safe), severity="crit")
    if btrfs_checksummed and cache in ("none", "directsync"):
        return DiskIssue(disk, f"{said}: {BTRFS_QUOTE}", _set_cache("writeback"), severity="crit")
    if disk.shareable and not disk.readonly and cache not in ("none", "directsync"):
        return DiskIssue(disk, f"{said}: {SHAREABLE_QUOTE}", _set_cache("none"))
    if cache not in ("writeback", "writethrough"):
        return None
    if location.zvol:
        return DiskIssue(disk, f"{said}: the host page cache on top of the ARC caches the zvol twice",
                         _set_cache("none"))
    if location.kind == "unknown":
        return DiskIssue(disk, f"{said}: it caches twice only if a zvol is under it, which the facts do not say",
                         DiskChange(manual="find the type of the storage of {disks} (pvesm status); on a zfspool, "
                                           "set cache=none",
                                    libvirt="find what backs {disks}; if it is a zvol, <driver ... cache='none'/>"),
                         severity="info")
    return None  # files on ZFS, librbd, block devices without an ARC, network storage: see the docstring


def check(facts: Facts) -> Iterator[Finding]:
    issues = []
    for vm, disk, location in facts.vm_disks():
        issue = _judge(vm, disk, location)
        if issue is not None:
            issues.append((vm, issue))
    yield from vm_findings(RULE, issues, prove=lambda fix: in_guest(RULE.id, BLOG_QD4, fix))


def _vm(scsi0: str, storage_cfg: str | None = None) -> dict[str, str]:
    files = {"qemu-server/100.conf": f"cores: 4\nmemory: 4096\nscsihw: virtio-scsi-single\nscsi0: {scsi0}\n"}
    return {**files, "pve/storage.cfg": storage_cfg} if storage_cfg else files


_ZFSPOOL = "zfspool: local-zfs\n\tpool rpool/data\n\tcontent images,rootdir\n\tsparse 1\n"
_CEPH = "rbd: ceph\n\tpool vms\n\tcontent images\n"
_KRBD = "rbd: ceph\n\tpool vms\n\tcontent images\n\tkrbd 1\n"
_BTRFS = "btrfs: data\n\tpath /mnt/data/pve\n\tcontent images,rootdir\n"
_LVMTHIN = "lvmthin: local-lvm\n\tthinpool data\n\tvgname pve\n\tcontent images,rootdir\n"
FAILING = (
    _vm("local-zfs:vm-100-disk-0,cache=writeback,iothread=1,size=32G", _ZFSPOOL),  # a zvol: page cache on the ARC
    _vm("local-zfs:vm-100-disk-0,cache=writeback,iothread=1,size=32G"),  # no storage.cfg: local-zfs assumed, said
    _vm("local-zfs:vm-100-disk-0,cache=unsafe,iothread=1,size=32G", _ZFSPOOL),  # crit
    _vm("ceph:vm-100-disk-0,cache=unsafe,iothread=1,size=32G", _CEPH),  # crit on any storage
    _vm("data:100/vm-100-disk-0.raw,cache=none,iothread=1,size=32G", _BTRFS),  # crit: checksum errors
    _vm("nas:vm-100-disk-0,cache=writeback,iothread=1,size=32G", _ZFSPOOL),  # info: storage nas not in storage.cfg
    # libvirt without a cache attribute: QEMU's default, writeback, on a zvol
    {"libvirt/web.xml": "<domain type='kvm'><name>web</name><memory unit='GiB'>4</memory><devices>"
                        "<disk type='block' device='disk'><driver name='qemu' type='raw'/>"
                        "<source dev='/dev/zvol/tank/web'/><target dev='vda' bus='virtio'/></disk>"
                        "</devices></domain>\n"},
    # a shareable disk on an LVM volume, left at QEMU's writeback
    {"libvirt/web.xml": "<domain type='kvm'><name>web</name><devices><disk type='block' device='disk'>"
                        "<driver name='qemu' type='raw'/><source dev='/dev/vg0/shared'/>"
                        "<target dev='vdb' bus='virtio'/><shareable/></disk></devices></domain>\n"},
)
PASSING = (
    _vm("local-zfs:vm-100-disk-0,iothread=1,size=32G", _ZFSPOOL),  # Proxmox's default: cache=none
    _vm("ceph:vm-100-disk-0,cache=writeback,iothread=1,size=32G", _CEPH),  # librbd: what Ceph recommends
    _vm("ceph:vm-100-disk-0,cache=writeback,iothread=1,size=32G", _KRBD),  # krbd: a block device, no ARC
    _vm("data:100/vm-100-disk-0.raw,iothread=1,size=32G", _BTRFS),  # qemu-server leaves writeback on btrfs
    _vm("local-lvm:vm-100-disk-0,cache=writeback,iothread=1,size=32G", _LVMTHIN),
    # a qcow2 file on a ZFS file system: ZFS file I/O is cached in the ARC only, never twice
    {**_vm("tank-images:100/vm-100-disk-0.qcow2,cache=writeback,iothread=1,size=32G",
           "dir: tank-images\n\tpath /tank/images\n\tcontent images\n"),
     "mounts.txt": "tank/images /tank/images zfs rw,xattr,noacl 0 0\n"},
    # the same shareable disk with caching off, as libvirt advises
    {"libvirt/web.xml": "<domain type='kvm'><name>web</name><devices><disk type='block' device='disk'>"
                        "<driver name='qemu' type='raw' cache='none'/><source dev='/dev/vg0/shared'/>"
                        "<target dev='vdb' bus='virtio'/><shareable/></disk></devices></domain>\n"},
)


RULE = Rule(
    id="KVM-CACHE",
    title="VM disk cache mode wrong for its storage",
    checks="cache mode wrong for the disk's storage: writeback/writethrough on a zvol (also libvirt's absent "
           "cache) or on a libvirt `<shareable/>` disk; unsafe anywhere or none/directsync on btrfs (crit); "
           "writeback on an unknown storage (info)",
    severity="warn",
    rationale="On a zvol the host page cache sits on top of the ARC and caches every block twice; unsafe ignores "
              "the guest's flushes; btrfs opened with O_DIRECT (cache=none) produces checksum errors; a shared disk "
              "must not be cached by one host.",
    fix="cache=none on zvols and shareable disks; writeback (or the default) on btrfs; never unsafe (librbd: "
        "writeback is right)",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_cache",
    check=check,
    doc=__doc__,
    # cache=unsafe or O_DIRECT on btrfs: data is lost (crit); an unknown storage: verify by hand (info)
    other_severities=frozenset({"crit", "info"}),
    failing=FAILING,
    passing=PASSING,
)
