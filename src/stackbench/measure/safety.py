"""Deciding where fio may write, before it writes anything.

The rule of the project: never a byte to a device or file holding data the user did not hand over for
destruction. So a directory or a new path gets a scratch file we create and remove; an existing file or a
block device needs `--destroy-data`, and a block device is refused even then if anything says it is in use
or holds data: a signature (blkid low-level probe, wipefs), partitions, a mount, active swap, or holders
(device-mapper, LVM, md). When a probe tool is missing we refuse rather than guess.

A device can also show bytes that something else uses. A loop device shows a range of its backing file:
another loop device over an overlapping range of the same file, if it is mounted, swap or held, uses those
bytes (a second loop device at an offset into a mounted image passed every check of the device itself and
fio corrupted the mounted ext4); so does a backing block device that is mounted, and a process that has
the backing file open. The same holds for an existing file given with --destroy-data that backs a loop
device in use or that a process has open. All of these are refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from stackbench.base import processes, spawn
from stackbench.engine.jobtext import check_value
from stackbench.base.errors import UnsafeTarget
from stackbench.probe.block import SYS_BLOCK, device_name_of
from stackbench.probe.loop import Span, attached, identity_of, loop_device, partition_spans
from stackbench.base.units import format_bytes
from stackbench.model.warning import Warning, WarningCode

MIN_MARGIN = 16 * 1024**2


@dataclass(frozen=True)
class Target:
    """Where fio writes, and whether the file is ours to delete afterwards."""

    kind: Literal["directory", "file", "device"]
    fio_filename: str
    remove_after: bool
    space_dir: Path
    capacity_bytes: int | None = None
    read_only: bool = False  # a device that holds data: fio only reads it, and is told so (--readonly)

    @property
    def fio_args(self) -> tuple[str, ...]:
        """fio's own guard for a read-only target: with --readonly it refuses any job that writes."""
        return ("--readonly",) if self.read_only else ()


def check_target_text(path: Path) -> Path:
    """The target as an absolute path; refused, before anything is created, when a fio job file cannot carry
    it literally. Absolute because fio runs in its private job directory (engine/fio.py): a relative target
    reached it as a path under that directory, and `run -t bench` wrote its scratch file there, measuring
    the file system of the job directory instead of the target."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    check_value("filename", str(path), what="--target path")
    return path


def resolve_target(path: Path, *, size: int, destroy_data: bool, run_id: str, read_only: bool = False) -> Target:
    """Check `path` and return what fio should write to; raise `UnsafeTarget` with the fix otherwise.
    `read_only`: a block device that fio only reads (its data stays as it is), whatever it holds."""
    path = check_target_text(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as error:
        raise UnsafeTarget(f"cannot inspect {path}: {error.strerror}", "Check the path and its permissions") from None
    if read_only:
        return _read_only_device(path, st, size)

    if st is None:
        parent = path.parent
        if not parent.is_dir():
            raise UnsafeTarget(
                f"{path} does not exist and neither does its directory {parent}",
                "Create the directory first or pass an existing directory as --target",
            )
        target = Target("file", str(path), True, parent)
        check_free_space(parent, size, reusable=0)
        return target
    if stat.S_ISDIR(st.st_mode):
        if not os.access(path, os.W_OK | os.X_OK):
            raise UnsafeTarget(f"the directory {path} is not writable", "Choose a writable --target")
        scratch = path / f"stackbench-{run_id}.scratch"
        check_free_space(path, size, reusable=0)
        return Target("directory", str(scratch), True, path)
    if stat.S_ISREG(st.st_mode):
        if not destroy_data:
            raise UnsafeTarget(
                f"{path} is an existing file ({format_bytes(st.st_size)}) and would be overwritten",
                "Pass a directory or a new file name as --target, or --destroy-data if its contents may be destroyed",
            )
        _refuse_shared_bytes(path, Span(identity_of(st), 0, max(st.st_size, size)), os.path.realpath(path))
        check_free_space(path.parent, size, reusable=st.st_size)
        return Target("file", str(path), False, path.parent)
    if stat.S_ISBLK(st.st_mode):
        capacity = check_block_device(path, st, destroy_data=destroy_data)
        if size > capacity:
            raise UnsafeTarget(
                f"--size {format_bytes(size)} is larger than {path} ({format_bytes(capacity)})",
                "Lower --size to at most the device size",
            )
        return Target("device", str(path), False, path, capacity)
    raise UnsafeTarget(
        f"{path} is not a directory, regular file or block device",
        "Pass a directory (a scratch file is created there) as --target",
    )


def _read_only_device(path: Path, st: os.stat_result | None, size: int) -> Target:
    """A device measured by reading it only: nothing it holds is checked, since nothing is written."""
    if st is None or not stat.S_ISBLK(st.st_mode):
        raise UnsafeTarget(f"a read-only run reads a block device, and {path} is not one",
                           "Give a block device, or measure a directory without read-only")
    name = device_name_of(st.st_rdev)
    try:
        capacity = int((SYS_BLOCK / str(name) / "size").read_text().strip()) * 512
    except (OSError, ValueError):
        raise UnsafeTarget(f"cannot find {path} in /sys/class/block", "Pass the device's /dev path") from None
    if size > capacity:
        raise UnsafeTarget(f"--size {format_bytes(size)} is larger than {path} ({format_bytes(capacity)})",
                           "Lower --size to at most the device size")
    return Target("device", str(path), False, path, capacity, read_only=True)


def room_for(path: Path, *, destroy_data: bool) -> tuple[int | None, bool]:
    """(bytes a test file at `path` could take, whether that is a whole device) before `resolve_target`
    decides whether fio may write there: the largest size `check_free_space` accepts on the file system for
    a directory or a new file (counting an existing file's own size with --destroy-data), the device size for
    a block device. (None, False) when it cannot be told; `resolve_target` then refuses or accepts as always."""
    path = Path(path).expanduser()
    try:
        st = os.stat(path)
    except OSError:
        st = None
    try:
        if st is None:
            vfs = os.statvfs(path.parent)
            return largest_size(vfs.f_bavail * vfs.f_frsize), False
        if stat.S_ISDIR(st.st_mode):
            vfs = os.statvfs(path)
            return largest_size(vfs.f_bavail * vfs.f_frsize), False
        if stat.S_ISREG(st.st_mode) and destroy_data:
            vfs = os.statvfs(path.parent)
            return largest_size(vfs.f_bavail * vfs.f_frsize + st.st_size), False
        if stat.S_ISBLK(st.st_mode) and destroy_data:
            name = device_name_of(st.st_rdev)
            return int((SYS_BLOCK / str(name) / "size").read_text().strip()) * 512, True
    except (OSError, ValueError):
        pass
    return None, False


def _margin(size: int) -> int:
    """What a file system keeps free beyond the test file: 16 MiB or 1 % of the file."""
    return max(MIN_MARGIN, size // 100)


def largest_size(free: int) -> int:
    """The largest test file `check_free_space` accepts with `free` bytes free: a size chosen for a target
    (cache-exhaustion) must pass the check the run then makes, margin included."""
    return max(0, min(free - MIN_MARGIN, free * 100 // 101))


def check_free_space(directory: Path, size: int, *, reusable: int) -> None:
    """Refuse when the file system cannot hold `size` bytes (plus a margin) next to what is there."""
    try:
        vfs = os.statvfs(directory)
    except OSError as error:
        raise UnsafeTarget(f"cannot read free space of {directory}: {error.strerror}", "Check the path") from None
    free = vfs.f_bavail * vfs.f_frsize + reusable
    needed = size + _margin(size)
    if free < needed:
        raise UnsafeTarget(
            f"only {format_bytes(free)} free on {directory}, but --size {format_bytes(size)} needs "
            f"{format_bytes(needed)} with margin",
            "Use a smaller --size or another --target",
        )


def check_block_device(path: Path, st: os.stat_result, *, destroy_data: bool) -> int:
    """Return the device size when fio may destroy its contents; otherwise raise `UnsafeTarget`."""
    if not destroy_data:
        raise UnsafeTarget(
            f"{path} is a block device and the test would destroy its contents",
            "Pass --destroy-data if the device is blank and may be overwritten, or test a file system directory",
        )
    name = device_name_of(st.st_rdev)
    if not name or not (SYS_BLOCK / name).exists():
        raise UnsafeTarget(f"cannot find {path} in /sys/class/block", "Pass the device's /dev path")
    node = SYS_BLOCK / name
    found = _signatures(path)
    if found:
        raise UnsafeTarget(f"{path} holds {found}", "Refusing to overwrite it; use a blank device (wipe it yourself first)")
    partitions = sorted(p.name for p in node.iterdir() if (p / "partition").exists())
    if partitions:
        raise UnsafeTarget(f"{path} has partitions ({', '.join(partitions)})", "Use a blank device without partitions")
    holders = sorted(p.name for p in (node / "holders").iterdir()) if (node / "holders").is_dir() else []
    if holders:
        raise UnsafeTarget(
            f"{path} is in use by {', '.join(holders)} (device-mapper, LVM or md)",
            "Stop using the device first; stackbench only writes to unused devices",
        )
    names = {name, *partitions}
    mounted = _mounted_names(names)
    if mounted:
        raise UnsafeTarget(f"{path} is mounted at {mounted}", "Unmount it first if its data may be destroyed")
    swaps = _swap_names(names)
    if swaps:
        raise UnsafeTarget(f"{path} is active swap", "swapoff it first if its data may be destroyed")
    _check_loop(path, name)
    sectors = (node / "size").read_text().strip()
    return int(sectors) * 512


def _in_use(name: str, *, partitions: bool = True) -> str | None:
    """How block device `name` (or, with `partitions`, a partition of it) is in use: mounted, swap, held;
    None if it is not."""
    node = SYS_BLOCK / name
    try:
        names = {name, *(p.name for p in node.iterdir() if partitions and (p / "partition").exists())}
    except OSError:
        names = {name}
    mounted = _mounted_names(names)
    if mounted:
        return f"mounted at {mounted}"
    if _swap_names(names):
        return "active swap"
    for each in sorted(names):
        try:
            holders = sorted(p.name for p in (SYS_BLOCK / each / "holders").iterdir())
        except OSError:
            continue
        if holders:
            return f"held by {', '.join(holders)}"
    return None


def _check_loop(path: Path, name: str) -> None:
    """Refuse a loop device whose bytes something in use shows too (see the module's docstring)."""
    device = loop_device(name)
    if device is None:
        return
    if device.span is None:
        raise UnsafeTarget(
            f"cannot tell which file {path} shows (its backing file {device.backing} is gone or unreadable)",
            "Use a loop device over a file that exists, or detach this one (losetup -d)",
        )
    shown = f"part of {device.backing} ({format_bytes(device.span.size)} from byte {device.span.offset})"
    _refuse_shared_bytes(path, device.span, device.backing, shown=shown, skip=name)
    if device.span.identity[0] == "device":  # a loop device over a block device
        backing = device_name_of(os.makedev(device.span.identity[1], device.span.identity[2])) or ""
        used = [(backing, _in_use(backing, partitions=False))] + [
            (part, _in_use(part)) for part, span in partition_spans(backing, device.span.identity)
            if span.overlaps(device.span)  # a partition elsewhere on the disk may be in use
        ] if backing else []
        for in_use, use in used:
            if use:
                raise UnsafeTarget(f"{path} shows {shown}, and /dev/{in_use} is {use}",
                                   f"Stop using /dev/{in_use} first if its data may be destroyed")


def _refuse_shared_bytes(path: Path, span: Span, backing: str, *, shown: str | None = None,
                         skip: str | None = None) -> None:
    """Refuse when a loop device in use shows bytes of `span`, or a process has its file open. `shown`:
    what a loop device target shows ("part of FILE (SIZE from byte N)"); None for a file target."""
    for other in attached():
        if other.name == skip or not (other.span.overlaps(span) if other.span else other.backing == backing):
            continue
        use = _in_use(other.name)
        if use:
            raise UnsafeTarget(
                f"{path} shows {shown}, overlapping /dev/{other.name}, which is {use}" if shown
                else f"{path} is the backing file of /dev/{other.name}, which is {use}",
                f"Stop using /dev/{other.name} first (umount, swapoff, losetup -d) if its data may be destroyed",
            )
    users = processes.opened_by(lambda st: identity_of(st) == span.identity)
    if users:
        who = f"process {users[0]} ({processes.command_name(users[0])})"
        raise UnsafeTarget(
            f"{path} shows {shown}, and {who} has that file open" if shown else f"{path} is open in {who}",
            "Stop that process first if the data may be destroyed",
        )


def _signatures(path: Path) -> str | None:
    """A description of what is on the device, or None when the probes find nothing."""
    blkid = shutil.which("blkid")
    if blkid is None:
        raise UnsafeTarget(
            "blkid is not installed, so the device cannot be checked for data",
            "Install util-linux (apt-get install util-linux)",
        )
    try:
        done = spawn.run(
            [blkid, "-p", "-o", "export", str(path)], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UnsafeTarget(f"blkid could not probe {path}: {error}", "Check the device") from None
    if done.returncode == 0:
        fields = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        return _describe(fields)
    if done.returncode != 2:  # 2 = nothing found
        raise UnsafeTarget(
            f"blkid could not probe {path} (exit {done.returncode}: {done.stderr.strip()[:120]})",
            "Run as root, or check the device",
        )
    wipefs = shutil.which("wipefs")
    if wipefs:
        try:
            listed = spawn.run(
                [wipefs, "--no-act", "--noheadings", "-o", "TYPE,OFFSET", str(path)],
                capture_output=True, text=True, timeout=30, check=False,
            )
            if listed.returncode == 0 and listed.stdout.strip():
                types = ", ".join(line.split()[0] for line in listed.stdout.splitlines() if line.split())
                return f"signatures found by wipefs: {types}"
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


def _describe(fields: dict[str, Any]) -> str:
    kind = fields.get("TYPE")
    uuid = fields.get("UUID")
    suffix = f" (UUID {uuid})" if uuid else ""
    if fields.get("PTTYPE") and not kind:
        return f"a {fields['PTTYPE']} partition table"
    names = {
        "LVM2_member": "an LVM physical volume",
        "swap": "a swap signature",
        "zfs_member": "a ZFS pool member label",
        "crypto_LUKS": "a LUKS encrypted volume",
        "linux_raid_member": "an md RAID member",
    }
    if kind in names:
        return names[kind] + suffix
    if kind:
        return f"an {kind} file system{suffix}" if kind[0] in "aeiou" else f"a {kind} file system{suffix}"
    usage = fields.get("USAGE") or "unknown"
    return f"a signature blkid recognises (usage {usage})"


def _mounted_names(names: set[str]) -> str | None:
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) < 5:
            continue
        try:
            major, minor = (int(x) for x in fields[2].split(":"))
        except ValueError:
            continue
        if device_name_of(os.makedev(major, minor)) in names and major != 0:
            return fields[4]
    return None


def _swap_names(names: set[str]) -> bool:
    try:
        lines = Path("/proc/swaps").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(Path(line.split()[0]).name in names for line in lines if line.split())


def cache_warning(
    system: dict[str, Any], size: int, reads: bool, fs_type: str | None, *, direct: bool = False
) -> Warning | None:
    """The warning for read tests whose file fits in RAM twice over: they measure caches, not the device.

    O_DIRECT bypasses the page cache where the file system honours it, except on ZFS before 2.3, where
    reads still come from the ARC.
    """
    if fs_type == "tmpfs":
        return Warning(
            WarningCode.TMPFS_TARGET, "", "the target is tmpfs: every result measures RAM, not a storage device"
        )
    if not reads or (direct and fs_type != "zfs"):
        return None
    ram = system.get("ram_bytes")
    if not ram or size >= 2 * ram:
        return None
    advice = f"use --size of at least {format_bytes(2 * ram)} (2x RAM) for device numbers"
    if fs_type == "zfs":
        advice += "; on ZFS, O_DIRECT before OpenZFS 2.3 still reads through the ARC"
    else:
        advice += ", or --direct where the file system honours O_DIRECT"
    return Warning(
        WarningCode.PAGE_CACHE, "",
        f"read results are cache-dominated: the test file ({format_bytes(size)}) is smaller than 2x RAM "
        f"({format_bytes(ram)})",
        advice,
    )
