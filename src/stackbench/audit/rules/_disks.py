"""Helpers for rules over VM disks: image files on ZFS file systems, the cache mode QEMU really gets, and fixes
that merge into one command per VM (`qm set VMID --scsi0 ... --scsi1 ...`) while keeping each disk's options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from stackbench.audit.facts import Facts
from stackbench.audit.rule import DiskDetail, Finding, Rule
from stackbench.audit.storage import DiskLocation
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
        if location.kind != "zfs-file" or not location.path or not location.dataset:
            continue
        images.setdefault(location.path, ImageOnZfs(location.path, location.dataset,
                                                    disk.image_format or file_format(location.path), vm, disk,
                                                    location.assumed))
    for path in sorted(facts.image_files or {}):
        dataset = facts.dataset_of_path(path)
        if dataset and path not in images:
            images[path] = ImageOnZfs(path, dataset, file_format(path))
    return list(images.values())


def effective_cache(vm: Vm, disk: VmDisk, location: DiskLocation) -> tuple[str, str]:
    """(the cache mode QEMU runs the disk with, how the config says it), for evidence.

    Without `cache`, qemu-server passes cache=none, except on a btrfs storage without `nocow`, where it passes
    nothing and QEMU's default, writeback, applies (qemu-server's drive_uses_cache_direct); libvirt without
    `<driver cache>` leaves QEMU's default too."""
    if disk.cache_set:
        return disk.cache, f"cache={disk.cache}"
    if vm.kind == "libvirt":
        return disk.cache, f"no cache= (QEMU's default: {disk.cache})"
    if location.storage_type == "btrfs" and location.storage and not location.storage.flag("nocow"):
        return "writeback", "no cache= (qemu-server leaves QEMU's default, writeback, on a btrfs storage)"
    return "none", "no cache= (Proxmox's default: none)"


def pve_drive(disk: VmDisk, **changes: str) -> str:
    """The whole Proxmox drive string with some options changed: `qm set --scsi0` replaces every option."""
    options = {**disk.options, **changes}
    return ",".join([disk.volume] + [f"{key}={value}" for key, value in options.items()])


@dataclass(frozen=True)
class DiskChange:
    """What one disk needs, in a shape that merges with the VM's other disks into one command."""

    drive: Mapping[str, str] = field(default_factory=dict)  # Proxmox drive options: `qm set VMID --KEY <drive>`
    vm_options: Mapping[str, str] = field(default_factory=dict)  # Proxmox VM options it needs: `--scsihw ...`
    libvirt: str = ""  # the `virsh edit` advice; {disks} becomes the disks' targets
    manual: str = ""  # a Proxmox step no `qm set` does; {disks} becomes the disks' keys


@dataclass(frozen=True)
class DiskIssue:
    """One disk a rule reports: why, and what it needs."""

    disk: VmDisk
    evidence: str
    change: DiskChange
    severity: str | None = None  # the rule's own unless one of its other_severities


def _steps(template_of: Callable[[DiskIssue], str], issues: Sequence[DiskIssue]) -> list[str]:
    """Each distinct template once, with the disks that share it."""
    keys: dict[str, list[str]] = {}
    for issue in issues:
        if template_of(issue):
            keys.setdefault(template_of(issue), []).append(issue.disk.key)
    return [template.format(disks=", ".join(disks)) for template, disks in keys.items()]


def vm_fix(vm: Vm, issues: Sequence[DiskIssue], after: str = "") -> str:
    """One command for all the disks where the tooling allows it: Proxmox takes any number of `--OPTION value`
    pairs in one `qm set` (a drive option is the whole drive string, so each disk keeps its other options);
    libvirt's advice is one `virsh edit` naming the disks."""
    if vm.kind == "proxmox":
        vm_options: dict[str, str] = {}
        for issue in issues:
            vm_options.update(issue.change.vm_options)
        arguments = [f"--{key} {value}" for key, value in vm_options.items()]
        arguments += [f"--{issue.disk.key} {pve_drive(issue.disk, **issue.change.drive)}" for issue in issues
                      if issue.change.drive]
        steps = ([f"qm set {vm.vmid} {' '.join(arguments)}"] if arguments else []) + \
            _steps(lambda issue: issue.change.manual, issues)
    else:
        steps = [f"virsh edit {vm.vmid}: {step}" for step in _steps(lambda issue: issue.change.libvirt, issues)]
    return "; ".join(steps + ([after] if after else []))


def vm_findings(rule: Rule, issues: Iterable[tuple[Vm, DiskIssue]], after: str = "",
                prove: Callable[[str], str] | None = None) -> list[Finding]:
    """The rule's disk issues as one finding per VM, in the order the VMs came, each disk's own fix kept."""
    by_vm: dict[int, tuple[Vm, list[DiskIssue]]] = {}
    for vm, issue in issues:
        by_vm.setdefault(id(vm), (vm, []))[1].append(issue)
    findings = []
    for vm, vm_issues in by_vm.values():
        details = [DiskDetail(issue.disk.key, issue.severity or rule.severity, issue.evidence,
                              vm_fix(vm, [issue], after)) for issue in vm_issues]
        fix = vm_fix(vm, vm_issues, after)
        findings.append(rule.vm_finding(vm.name, details, fix, prove=prove(fix) if prove else None))
    return findings
