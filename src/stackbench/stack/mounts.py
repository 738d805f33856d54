"""Which mount holds a path, from /proc/self/mountinfo: the device number ties a file to its mount (a
ZFS dataset or a btrfs subvolume has an anonymous 0:N device that only mountinfo names), and the fields
say the type, the source and the options.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mount:
    major: int
    minor: int
    root: str  # the part of the file system mounted here: `/` unless a bind mount or a btrfs subvolume
    point: str
    options: str  # per-mount options (rw, relatime, ...)
    fs_type: str
    source: str  # /dev/loop1, tank/images, server:/export, tmpfs
    super_options: str  # the file system's own options (data=ordered, subvol=/@, ...)


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), text)


def parse_mountinfo(text: str) -> list[Mount]:
    """proc(5)'s mountinfo lines, in mount order; lines without the ` - ` separator are skipped."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 2:
            continue
        major, _, minor = fields[2].partition(":")
        if not (major.isdigit() and minor.isdigit()):
            continue
        mounts.append(Mount(int(major), int(minor), _unescape(fields[3]), _unescape(fields[4]), fields[5],
                            tail[0], _unescape(tail[1]), tail[2] if len(tail) > 2 else ""))
    return mounts


def mountinfo() -> list[Mount]:
    try:
        return parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    except OSError:
        return []


def _inside(path: str, point: str) -> bool:
    return path == point or path.startswith(point.rstrip("/") + "/")


def mount_of(path: str, dev: int | None, mounts: list[Mount] | None = None) -> Mount | None:
    """The mount that holds `path`: among the mounts whose point contains it, the deepest, the last
    mounted one winning at one point (it hides the others); with `dev` (the file's st_dev), one whose device
    number is the file's is preferred, so a path that crosses a mount a stat could not see is not misread."""
    resolved = os.path.realpath(path)
    candidates = [m for m in (mountinfo() if mounts is None else mounts) if _inside(resolved, m.point)]
    if dev is not None:
        same = [m for m in candidates if (m.major, m.minor) == (os.major(dev), os.minor(dev))]
        candidates = same or candidates
    best: Mount | None = None
    for mount in candidates:
        if best is None or len(mount.point) >= len(best.point):
            best = mount
    return best
