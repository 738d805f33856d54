"""Where a VM disk lives on the host: Proxmox storage.cfg, and the kind of backing a disk's volume resolves to.

VM rules give advice that depends on what is under a disk (the host page cache on top of the ARC only happens
on a zvol; librbd has its own cache that honours flushes; btrfs must not be opened with O_DIRECT), so a disk's
volume is resolved to one of `KINDS` with a sentence saying how it was known (`DiskLocation.where`), and a
storage the facts do not describe is `unknown`, said so, never assumed to be ZFS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackbench.audit.errors import FactsFormatError

__all__ = ["KINDS", "PVE_DEFAULT_STORAGES", "DiskLocation", "Storage", "is_network_file_system", "locate_volume",
           "parse_storage_cfg"]

# What QEMU opens for a disk, as far as caching goes. The `file` kinds are refined by Facts.vm_disks with the
# file system the path lies on (mounts.txt, or the datasets' mount points).
KINDS = {
    "zvol": "a ZFS volume, opened as a host block device (its reads and writes go through the ARC)",
    "zfs-file": "an image file on a ZFS file system (file I/O on ZFS is cached in the ARC, not the page cache)",
    "btrfs-file": "an image file on btrfs (which honours O_DIRECT, so cache=none can produce checksum errors)",
    "file": "an image file on a local file system that is neither ZFS nor btrfs, or whose type the facts do not say",
    "netfs-file": "an image file on a network file system mounted on the host (NFS, CIFS, CephFS)",
    "block": "a host block device with no cache of its own (LVM, LVM-thin, kernel iSCSI, krbd, a passed-through disk)",
    "librbd": "a Ceph RBD image opened by QEMU through librbd, whose own cache QEMU's cache mode controls",
    "network": "a QEMU network driver with no host page cache (iscsidirect, ZFS over iSCSI, glusterfs, nbd, "
               "NFS through libnfs): no host file, whatever the path on the server looks like",
    "pci": "an NVMe controller QEMU drives itself through VFIO (libvirt disk type nvme): no host file system or "
           "page cache",
    "vhost": "a vhost-user or vDPA block device: a process or device outside QEMU does the I/O",
    "directory": "a host directory QEMU presents as a FAT disk (libvirt disk type dir, QEMU's vvfat driver)",
    "unknown": "a storage the facts do not describe",
}
_NETWORK_FILE_SYSTEMS = ("nfs", "nfs4", "cifs", "smb3", "ceph", "fuse.ceph-fuse", "fuse.glusterfs", "9p", "virtiofs")


@dataclass(frozen=True)
class Storage:
    id: str
    type: str  # zfspool, dir, lvmthin, nfs, ...
    options: dict[str, str]

    def flag(self, name: str) -> bool:
        """A storage.cfg boolean (`sparse`, `krbd`, `nocow`): present without a value, or 1/yes/on."""
        return self.options.get(name, "0") in ("1", "yes", "on", "true")


def parse_storage_cfg(text: str, name: str = "pve/storage.cfg") -> dict[str, Storage]:
    """Proxmox `/etc/pve/storage.cfg`: `type: id` headers, then indented `key value` lines."""
    storages: dict[str, Storage] = {}
    current: Storage | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            kind, sep, ident = line.partition(":")
            if not sep or not ident.strip():
                raise FactsFormatError(name, number, f"expected `type: id`, got {line[:60]!r}")
            current = Storage(ident.strip(), kind.strip(), {})
            storages[current.id] = current
        elif current is not None:
            key, _, value = line.strip().partition(" ")
            current.options[key] = value.strip() or "1"
        else:
            raise FactsFormatError(name, number, "option line before the first `type: id` header")
    return storages


# What a fresh Proxmox VE install has when storage.cfg is not in the facts.
PVE_DEFAULT_STORAGES = {
    "local": Storage("local", "dir", {"path": "/var/lib/vz"}),
    "local-zfs": Storage("local-zfs", "zfspool", {"pool": "rpool/data", "sparse": "1"}),
}


@dataclass(frozen=True)
class DiskLocation:
    """Where a VM disk lives, as far as its config, storage.cfg and the facts say."""

    kind: str  # one of KINDS
    where: str  # how it was known, for evidence: "storage local-zfs (zfspool, pool tank)", "/dev/zvol/tank/web"
    dataset: str | None = None  # the zvol, or the ZFS file system that holds the image file
    path: str | None = None  # the image file, when it is a file
    storage: Storage | None = None  # the Proxmox storage, when the volume names one that is known
    sparse_storage: bool = False  # a zfspool (or ZFS over iSCSI) storage with `sparse`
    assumed: bool = False  # storage.cfg was not in the facts: Proxmox's install defaults were assumed

    @property
    def zvol(self) -> bool:
        return self.kind == "zvol"

    @property
    def storage_type(self) -> str | None:
        return self.storage.type if self.storage else None


def _storage_where(storage: Storage, detail: str, assumed: bool) -> str:
    note = f"; storage.cfg not in the facts, a fresh Proxmox install's {storage.id} assumed" if assumed else ""
    return f"storage {storage.id} ({storage.type}{', ' + detail if detail else ''}){note}"


def _device(path: str) -> DiskLocation:
    if path.startswith("/dev/zvol/"):
        return DiskLocation("zvol", f"zvol {path[len('/dev/zvol/'):]}", dataset=path[len("/dev/zvol/"):])
    return DiskLocation("block", f"host block device {path}")


def _pve_storage(storage: Storage, name: str, assumed: bool) -> DiskLocation:
    """A Proxmox volume on a known storage, by the storage's type (pve-storage's plugins decide the path)."""
    options = storage.options
    if storage.type == "zfspool":
        if "pool" not in options:
            return DiskLocation("unknown", _storage_where(storage, "no pool", assumed), storage=storage, assumed=assumed)
        # A linked clone is written `base-100-disk-0/vm-101-disk-0`: the zvol is the last part (ZFSPoolPlugin).
        return DiskLocation("zvol", _storage_where(storage, f"pool {options['pool']}", assumed),
                            dataset=f"{options['pool']}/{name.rsplit('/', 1)[-1]}", storage=storage,
                            sparse_storage=storage.flag("sparse"), assumed=assumed)
    if storage.type in ("dir", "btrfs", "nfs", "cifs", "cephfs"):
        if "path" not in options:
            return DiskLocation("unknown", _storage_where(storage, "no path", assumed), storage=storage, assumed=assumed)
        # `100/base-100-disk-0.qcow2/101/vm-101-disk-0.qcow2` is a linked clone: the file is the last VMID/NAME.
        path = f"{options['path'].rstrip('/')}/images/{'/'.join(name.split('/')[-2:])}"
        kind = {"dir": "file", "btrfs": "btrfs-file"}.get(storage.type, "netfs-file")
        detail = f"path {options['path']}" + (", nocow" if storage.type == "btrfs" and storage.flag("nocow") else "")
        return DiskLocation(kind, _storage_where(storage, detail, assumed), path=path, storage=storage, assumed=assumed)
    if storage.type in ("lvm", "lvmthin", "iscsi"):
        detail = {"lvm": f"volume group {options.get('vgname', '?')}",
                  "lvmthin": f"thin pool {options.get('vgname', '?')}/{options.get('thinpool', '?')}",
                  "iscsi": "the kernel's iSCSI initiator, a /dev/disk/by-id device"}[storage.type]
        return DiskLocation("block", _storage_where(storage, detail, assumed), storage=storage, assumed=assumed)
    if storage.type == "rbd":
        if storage.flag("krbd"):
            return DiskLocation("block", _storage_where(storage, "krbd 1: the kernel's /dev/rbd device", assumed),
                                storage=storage, assumed=assumed)
        return DiskLocation("librbd", _storage_where(storage, "librbd", assumed), storage=storage, assumed=assumed)
    if storage.type in ("iscsidirect", "zfs", "glusterfs"):
        detail = {"iscsidirect": "QEMU's libiscsi", "zfs": "ZFS over iSCSI, QEMU's libiscsi; the ARC is the target's",
                  "glusterfs": "QEMU's libgfapi"}[storage.type]
        return DiskLocation("network", _storage_where(storage, detail, assumed), storage=storage,
                            sparse_storage=storage.type == "zfs" and storage.flag("sparse"), assumed=assumed)
    return DiskLocation("unknown", f"storage {storage.id} has type {storage.type}, which this audit does not know",
                        storage=storage, assumed=assumed)


def locate_volume(volume: str, storages: dict[str, Storage] | None) -> DiskLocation:
    """Where a Proxmox volume (`local-zfs:vm-100-disk-0`) or a libvirt source path lives, from the config and
    storage.cfg alone: file systems under image files are resolved by `Facts.vm_disks`."""
    if volume.startswith("/dev/"):
        return _device(volume)
    if volume.startswith("/"):
        return DiskLocation("file", f"file {volume}", path=volume)
    match = re.match(r"^([\w.-]+):(.+)$", volume)
    if not match:
        return DiskLocation("unknown", f"volume {volume!r} names no storage")
    storage_id, name = match[1], match[2]
    if storages is None:
        storage = PVE_DEFAULT_STORAGES.get(storage_id)
        if storage is None:
            return DiskLocation("unknown", f"storage {storage_id}: storage.cfg not in the facts, and {storage_id} is "
                                           "not a storage a fresh Proxmox install has")
        return _pve_storage(storage, name, assumed=True)
    storage = storages.get(storage_id)
    if storage is None:
        return DiskLocation("unknown", f"storage {storage_id} is not in storage.cfg")
    return _pve_storage(storage, name, assumed=False)


def is_network_file_system(fstype: str) -> bool:
    return fstype in _NETWORK_FILE_SYSTEMS or fstype.startswith("nfs")
