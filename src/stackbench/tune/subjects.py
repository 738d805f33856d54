"""What a knob acts on for a target: the device the file system sits on (its read-ahead), the disks under it
(their schedulers), its mount, its ZFS dataset and the pool's disks, the host's sysctls, a test VM's disk.

Subjects come from the kernel (sysfs, mountinfo) and from `zfs`/`zpool` output, never from text a user typed
beyond the target and `--vm`; names are checked before they reach a path or an argv.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from stackbench.probe.block import collect_target_facts, device_chain
from stackbench.tune import actions
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Subject

SYS_BLOCK = Path("/sys/block")
_DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:!-]*$")


@dataclass(frozen=True)
class TargetInfo:
    """The target as tune sees it: its file system and what is under it."""

    path: str
    fs_type: str | None = None
    mount_point: str | None = None
    mount_source: str | None = None
    devices: tuple[dict[str, Any], ...] = ()  # probe/block.device_chain: top first
    dataset: str | None = None
    pool: str | None = None
    pool_disks: tuple[str, ...] = ()
    zfs_module: bool = False
    vm: str | None = None  # --vm VMID:DISK
    facts: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        if self.dataset:
            return f"{self.dataset} (ZFS)"
        device = self.devices[0]["name"] if self.devices else "?"
        return f"{self.mount_point or self.path} ({self.fs_type or '?'} on {device})"


def target_info(path: Path, vm: str | None = None) -> TargetInfo:
    facts = collect_target_facts(path)
    dataset = facts.get("zfs_dataset")
    pool = dataset.split("/", 1)[0] if dataset else None
    return TargetInfo(
        path=str(path), fs_type=facts.get("fs_type"), mount_point=facts.get("mount_point"),
        mount_source=facts.get("mount_source"), devices=tuple(facts.get("block_devices") or ()),
        dataset=dataset, pool=pool, pool_disks=tuple(pool_disks(pool)) if pool else (),
        zfs_module=Path("/sys/module/zfs/parameters").is_dir(), vm=vm, facts=facts,
    )


def pool_disks(pool: str) -> list[str]:
    """The whole disks under a pool's vdevs (`zpool list -v -H -P`: /dev/vdb1 -> vdb), for their queues."""
    try:
        text = actions.output_of(["zpool", "list", "-v", "-H", "-P", pool])
    except ActionFailed:
        return []
    disks: list[str] = []
    for line in text.splitlines():
        name = line.strip().split("\t")[0].strip()
        if not name.startswith("/dev/"):
            continue
        try:
            resolved = os.path.basename(os.path.realpath(name))
        except OSError:
            continue
        for entry in device_chain(resolved):
            if entry.get("role") == "disk" and entry["name"] not in disks:
                disks.append(entry["name"])
    return disks


def _device(name: str) -> Subject:
    if not _DEVICE.match(name) or not (SYS_BLOCK / name / "queue").is_dir():
        raise ActionFailed(f"{name!r} is not a block device with a queue", "Check the target")
    return Subject("block-device", name)


def fs_device(info: TargetInfo) -> list[Subject] | str:
    """The device whose read-ahead a buffered read of the file system uses: the top of its chain (a dm device,
    a loop device, the whole disk of a partition); for ZFS, which reads ahead itself, the pool's disks."""
    if info.dataset:
        return [_device(name) for name in info.pool_disks] or "no disks found under the pool"
    for entry in info.devices:
        if entry.get("role") != "partition":
            return [_device(entry["name"])]
    return "the target is not on a block device"


def disks(info: TargetInfo) -> list[Subject] | str:
    """The disks where requests queue (their scheduler, nr_requests): every `disk` of the chain or the pool."""
    names = list(info.pool_disks) if info.dataset else [d["name"] for d in info.devices if d.get("role") == "disk"]
    subjects = [_device(name) for name in names if (SYS_BLOCK / name / "queue" / "scheduler").exists()]
    return subjects or "no disk with a scheduler is under the target"


def mount(fs_types: tuple[str, ...]) -> Callable[[TargetInfo], list[Subject] | str]:
    def select(info: TargetInfo) -> list[Subject] | str:
        if info.fs_type not in fs_types or not info.mount_point:
            return f"the target's file system is {info.fs_type or 'unknown'}, not {' or '.join(fs_types)}"
        return [Subject("mount", info.mount_point, {"source": info.mount_source or "", "fs_type": info.fs_type})]

    return select


def dataset(info: TargetInfo) -> list[Subject] | str:
    if not info.dataset:
        return "the target is not on a ZFS dataset"
    return [Subject("dataset", info.dataset)]


def zfs_module(info: TargetInfo) -> list[Subject] | str:
    return [Subject("zfs-module", "zfs")] if info.zfs_module else "the zfs kernel module is not loaded"


def host(info: TargetInfo) -> list[Subject] | str:
    return [Subject("host", "sysctl")]


def vm_disk(info: TargetInfo) -> list[Subject] | str:
    if not info.vm:
        return "no test VM named (--vm VMID:DISK)"
    return [Subject("vm-disk", info.vm)]


def everywhere(info: TargetInfo) -> list[Subject] | str:
    """A user's knob acts on what its own commands name."""
    return [Subject("user", "commands")]
