"""Facts about the target: its file system and the block devices under it.

The chain from a mount down to the disks (partition -> disk, dm-crypt/LVM -> slaves) comes from sysfs, which
every Linux has, with findmnt for the mount. A file system without a block device (tmpfs, ZFS, NFS) is
recorded with an empty device list and its mount source (for ZFS: the dataset).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from stackbench.base import spawn
from pathlib import Path
from typing import Any

SYS_BLOCK = Path("/sys/class/block")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _int(path: Path) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def mount_of(path: Path) -> dict[str, Any]:
    """`fs_type`, `mount_source`, `mount_point` of the file system holding `path` (best effort)."""
    tool = shutil.which("findmnt")
    if tool:
        try:
            done = spawn.run(
                [tool, "-J", "-n", "-o", "FSTYPE,SOURCE,TARGET,OPTIONS", "-T", str(path)],
                capture_output=True, text=True, timeout=10, check=False,
            )
            entries = json.loads(done.stdout).get("filesystems", []) if done.returncode == 0 else []
            if entries:
                entry = entries[0]
                return {
                    "fs_type": entry.get("fstype"),
                    "mount_source": entry.get("source"),
                    "mount_point": entry.get("target"),
                    "mount_options": entry.get("options"),
                }
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
    return _mount_from_mountinfo(path)


def _mount_from_mountinfo(path: Path) -> dict[str, Any]:
    best: dict[str, Any] = {"fs_type": None, "mount_source": None, "mount_point": None, "mount_options": None}
    try:
        resolved = str(path.resolve())
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return best
    length = -1
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        point = fields[4].replace("\\040", " ")
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= length:
            length = len(point)
            best = {"fs_type": tail[0], "mount_source": tail[1], "mount_point": point, "mount_options": fields[5]}
    return best


def device_name_of(dev: int) -> str | None:
    """Kernel name (`vda1`, `dm-0`, `loop3`) of a device number, via /sys/dev/block."""
    link = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    try:
        return link.resolve().name
    except OSError:
        return None


def logical_block_size(device: Path) -> int | None:
    """The device's logical block size: the unit of O_DIRECT I/O on it."""
    try:
        name = device_name_of(os.stat(device).st_rdev)
    except OSError:
        return None
    if name is None:
        return None
    # A partition has no queue/ of its own; its disk's is one level up.
    for base in (SYS_BLOCK / name / "queue", (SYS_BLOCK / name).resolve().parent / "queue"):
        size = _int(base / "logical_block_size")
        if size:
            return size
    return None


def _disk_facts(name: str) -> dict[str, Any]:
    base = SYS_BLOCK / name
    queue = base / "queue"
    sectors = _int(base / "size")
    rotational = _int(queue / "rotational")
    scheduler = _read(queue / "scheduler")
    if scheduler and "[" in scheduler:
        scheduler = scheduler.split("[", 1)[1].split("]", 1)[0]
    return {
        "name": name,
        "path": f"/dev/{name}",
        "model": _read(base / "device" / "model"),
        "vendor": _read(base / "device" / "vendor"),
        "serial": _read(base / "device" / "serial") or _read(base / "serial"),
        "logical_sector_size": _int(queue / "logical_block_size"),
        "physical_sector_size": _int(queue / "physical_block_size"),
        "rotational": None if rotational is None else bool(rotational),
        "size_bytes": sectors * 512 if sectors is not None else None,
        "scheduler": scheduler,
        "dm_name": _read(base / "dm" / "name"),
    }


def device_chain(name: str) -> list[dict[str, Any]]:
    """The device and everything under it: partitions resolve to their disk, dm/md devices to their slaves."""
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop(0)
        if current in seen or not (SYS_BLOCK / current).exists():
            continue
        seen.add(current)
        facts = _disk_facts(current)
        node = SYS_BLOCK / current
        if (node / "partition").exists():
            parent = node.resolve().parent.name
            facts["role"] = "partition"
            pending.append(parent)
        else:
            slaves = sorted(p.name for p in (node / "slaves").iterdir()) if (node / "slaves").is_dir() else []
            facts["role"] = "virtual" if slaves else "disk"
            pending.extend(slaves)
        chain.append(facts)
    return chain


def collect_target_facts(path: Path) -> dict[str, Any]:
    """Facts about the file system and block devices under `path` (a directory, file or block device)."""
    facts: dict[str, Any] = {"fs_type": None, "mount_source": None, "mount_point": None, "block_devices": []}
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISBLK(st.st_mode):
        name = device_name_of(st.st_rdev)
        facts["fs_type"] = "block-device"
        facts["block_devices"] = device_chain(name) if name else []
        return facts
    probe = path if path.exists() else path.parent
    facts.update(mount_of(probe))
    try:
        dev = os.stat(probe).st_dev
    except OSError:
        return facts
    name = device_name_of(dev)
    if name and (SYS_BLOCK / name).exists():
        facts["block_devices"] = device_chain(name)
    if facts.get("fs_type") == "zfs":
        facts["zfs_dataset"] = facts.get("mount_source")
    return facts
