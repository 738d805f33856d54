"""KVM-AIO-NATIVE: aio=native (libvirt io='native') with a cache mode other than none/directsync: QEMU 2.6
and later refuse to start the VM ("aio=native was specified, but it requires cache.direct=on"), because Linux
native AIO needs O_DIRECT.

The check is in QEMU's file-posix driver (block/file-posix.c, raw_open_common), which opens image files and
host block devices: every Proxmox storage but rbd without krbd (QEMU's librbd driver), iscsidirect and ZFS
over iSCSI (libiscsi) and glusterfs (libgfapi), and libvirt file and block disks but not network ones, PCI
NVMe devices (QEMU's nvme driver), vhost-user disks (the I/O is done outside QEMU) or directories (vvfat).
Those drivers ignore aio=native, so the rule is silent there. The cache mode is the one QEMU really gets: a
Proxmox disk without `cache` on a btrfs storage (without `nocow`) runs with QEMU's default, writeback, so
aio=native fails there too. On an unknown storage the finding says the file-posix driver was assumed.
Sources: https://gitlab.com/qemu-project/qemu/-/blob/master/block/file-posix.c,
https://github.com/proxmox/qemu-server/blob/master/src/PVE/QemuServer.pm (drive_uses_cache_direct).
"""

from __future__ import annotations

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import DiskChange, DiskIssue, effective_cache, vm_findings

OWN_DRIVERS = ("librbd", "network", "pci", "vhost", "directory")  # not opened through file-posix
ASSUMED = ("; {where}: assumed opened as a file or block device, as every storage but rbd without krbd, "
           "iscsidirect, ZFS over iSCSI and glusterfs is")


def check(facts: Facts) -> Iterator[Finding]:
    issues = []
    for vm, disk, location in facts.vm_disks():
        if disk.aio != "native" or location.kind in OWN_DRIVERS:
            continue
        cache, written = effective_cache(vm, disk, location)
        if cache in ("none", "directsync"):
            continue
        note = ASSUMED.format(where=location.where) if location.kind == "unknown" else ""
        if location.kind == "btrfs-file":  # O_DIRECT on btrfs is KVM-CACHE's crit: change the AIO instead
            change = DiskChange(drive={"aio": "io_uring"}, libvirt="<driver ... io='io_uring'/> on {disks}")
        else:
            change = DiskChange(drive={"cache": "none"}, libvirt="<driver ... cache='none'/> or io='threads' on {disks}")
        issues.append((vm, DiskIssue(disk, f"{disk.key}: aio=native with {written}{note}", change)))
    yield from vm_findings(RULE, issues)


def _vm(scsi0: str, storage_cfg: str = "zfspool: local-zfs\n\tpool rpool/data\n\tcontent images\n") -> dict[str, str]:
    return {"qemu-server/100.conf": f"memory: 4096\nscsihw: virtio-scsi-single\nscsi0: {scsi0}\n",
            "pve/storage.cfg": storage_cfg}


_BTRFS = "btrfs: data\n\tpath /mnt/data/pve\n\tcontent images\n"
FAILING = (
    _vm("local-zfs:vm-100-disk-0,aio=native,cache=writeback,iothread=1,size=32G"),
    _vm("data:100/vm-100-disk-0.raw,aio=native,iothread=1,size=32G", _BTRFS),  # btrfs: QEMU's writeback default
)
PASSING = (
    _vm("local-zfs:vm-100-disk-0,aio=native,iothread=1,size=32G"),  # cache=none: O_DIRECT
    _vm("ceph:vm-100-disk-0,aio=native,cache=writeback,iothread=1,size=32G", "rbd: ceph\n\tpool vms\n"),  # librbd
)


RULE = Rule(
    id="KVM-AIO-NATIVE",
    title="aio=native without O_DIRECT",
    checks="aio=native with a cache mode other than none/directsync, where QEMU opens a file or host device (not "
           "librbd, libiscsi, libgfapi)",
    severity="err",
    rationale="The VM will not start: native AIO needs cache=none or directsync.",
    fix="cache=none, or aio=io_uring/threads",
    source="https://gitlab.com/qemu-project/qemu/-/blob/master/block/file-posix.c",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
