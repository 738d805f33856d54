"""Loop devices: which file (or block device) each attached one shows, and which bytes of it.

Two loop devices over one image show the same bytes where their ranges overlap, so writing to one writes
into what the other shows: a second loop device at an offset into an image whose first loop device was
mounted looked blank to every check of the device itself, and fio on it corrupted the mounted ext4.
safety.py asks this module what else shows a loop device's bytes.

What the backing file is comes from the kernel (LOOP_GET_STATUS64: its device and inode numbers), not
from the path sysfs shows: that path is text from when the device was set up, and the file may have been
renamed, or replaced by another one, since. The path is the fallback where the ioctl cannot be asked.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Tuple

SYS_BLOCK = Path("/sys/class/block")
LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit (u64), lo_number,
# lo_encrypt_type, lo_encrypt_key_size, lo_flags (u32), lo_file_name[64], lo_crypt_name[64],
# lo_encrypt_key[32], lo_init[2] (u64)
LOOP_INFO64 = struct.Struct("=5Q4I64s64s32s2Q")

Identity = Tuple[str, int, int]  # ("file", st_dev, st_ino) or ("device", major, minor); 3.8 hosts run this


@dataclass(frozen=True)
class Span:
    """Bytes [offset, offset + size) of a backing file or device."""

    identity: Identity
    offset: int
    size: int

    def overlaps(self, other: Span) -> bool:
        return (self.identity == other.identity and self.offset < other.offset + other.size
                and other.offset < self.offset + self.size)


@dataclass(frozen=True)
class LoopDevice:
    name: str  # loop1
    backing: str  # the backing file's path as the kernel shows it
    span: Span | None  # None when what backs it cannot be told


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _decode_dev(encoded: int) -> tuple[int, int]:
    """(major, minor) of a device number in the kernel's `new_encode_dev` form (the ioctl's)."""
    return (encoded >> 8) & 0xFFF, (encoded & 0xFF) | ((encoded >> 12) & 0xFFF00)


def identity_of(st: os.stat_result) -> Identity:
    """A file as its inode, a block device as its device number (two nodes of one disk are one disk)."""
    if stat.S_ISBLK(st.st_mode):
        return ("device", os.major(st.st_rdev), os.minor(st.st_rdev))
    return ("file", st.st_dev, st.st_ino)


def _from_kernel(name: str) -> Identity | None:
    try:
        fd = os.open(f"/dev/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(LOOP_INFO64.size))
    except OSError:
        return None
    finally:
        os.close(fd)
    device, inode, rdevice = LOOP_INFO64.unpack(raw)[:3]
    if rdevice:
        return ("device", *_decode_dev(rdevice))
    major, minor = _decode_dev(device)
    return ("file", os.makedev(major, minor), inode)


def _from_path(backing: str) -> Identity | None:
    if backing.endswith(" (deleted)"):
        return None
    try:
        return identity_of(os.stat(backing))
    except OSError:
        return None


def loop_device(name: str) -> LoopDevice | None:
    """The attached loop device `name` (loop1), or None when `name` is no attached loop device."""
    node = SYS_BLOCK / name
    backing = _read(node / "loop" / "backing_file")
    if backing is None:
        return None
    offset = _read(node / "loop" / "offset")
    sectors = _read(node / "size")
    identity = _from_kernel(name) or _from_path(backing)
    try:
        span = Span(identity, int(offset or 0), int(sectors or 0) * 512) if identity else None
    except ValueError:
        span = None
    return LoopDevice(name, backing, span)


def attached() -> list[LoopDevice]:
    """Every attached loop device."""
    try:
        names = sorted(p.name for p in SYS_BLOCK.iterdir() if p.name.startswith("loop"))
    except OSError:
        return []
    return [device for name in names if (device := loop_device(name)) is not None]


def partition_spans(name: str, identity: Identity) -> list[tuple[str, Span]]:
    """The partitions of disk `name`, each as the bytes of the disk it shows."""
    found = []
    try:
        children = list((SYS_BLOCK / name).iterdir())
    except OSError:
        return []
    for child in children:
        start, sectors = _read(child / "start"), _read(child / "size")
        if (child / "partition").exists() and start and sectors:
            try:
                found.append((child.name, Span(identity, int(start) * 512, int(sectors) * 512)))
            except ValueError:
                continue
    return found
