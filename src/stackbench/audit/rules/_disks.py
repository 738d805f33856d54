"""Helpers for rules over VM disks: image files on ZFS file systems, thin storage, and fixes that keep options."""

from __future__ import annotations

from dataclasses import dataclass

from stackbench.audit.facts import Facts
from stackbench.audit.vm import Vm, VmDisk
from stackbench.audit.vm import image_format as file_format  # the same suffix mapping VM configs are read with


@dataclass(frozen=True)
class ImageOnZfs:
    path: str
    dataset: str  # the file system that holds it
    format: str | None  # qcow2, raw, vmdk ... (from the VM config, else from the file name)
    vm: Vm | None = None  # None: found on disk by the probe (image-files.txt), not named by a VM config
    disk: VmDisk | None = None
    assumed: bool = False  # the path came from Proxmox's install defaults (storage.cfg not in the facts)

    @property
    def subject(self) -> str:
        return f"{self.vm.name} {self.disk.key}" if self.vm and self.disk else self.path

    @property
    def origin(self) -> str:
        if self.vm and self.disk:
            note = "; storage.cfg not in the facts, Proxmox's default storages assumed" if self.assumed else ""
            return f"{self.disk.key} of {self.vm.name}{note}"
        return "found by the probe in image-files.txt, not named by a VM config in the facts"


def images_on_zfs(facts: Facts) -> list[ImageOnZfs]:
    """VM disks that are files on a ZFS file system, then image files the probe found there (each path once)."""
    images: dict[str, ImageOnZfs] = {}
    for vm, disk, location in facts.vm_disks():
        if location is None or location.zvol or not location.path or not location.dataset:
            continue
        images.setdefault(location.path, ImageOnZfs(location.path, location.dataset,
                                                    disk.image_format or file_format(location.path), vm, disk,
                                                    location.assumed))
    for path in sorted(facts.image_files or {}):
        dataset = facts.dataset_of_path(path)
        if dataset and path not in images:
            images[path] = ImageOnZfs(path, dataset, file_format(path))
    return list(images.values())


def pve_drive(disk: VmDisk, **changes: str) -> str:
    """The whole Proxmox drive string with some options changed: `qm set --scsi0` replaces every option."""
    options = {**disk.options, **changes}
    return ",".join([disk.volume] + [f"{key}={value}" for key, value in options.items()])


def disk_fix(vm: Vm, disk: VmDisk, libvirt: str, **changes: str) -> str:
    """`qm set VMID --KEY <drive with changes>` for Proxmox, the given `virsh edit` advice for libvirt."""
    return vm.fix(f"qm set VMID --{disk.key} {pve_drive(disk, **changes)}", libvirt)
