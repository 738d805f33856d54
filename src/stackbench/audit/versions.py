"""OpenZFS versions and the defaults that changed between them.

Rules compare what a pool *has* with what the running release would do by default, so the same facts read
differently on 0.7, 2.1, 2.2 and 2.3 (knowledge base, section 3 "Stale defaults"). The live value always
wins over a documented default; these functions only explain a value or say whether it is the stock one.
"""

from __future__ import annotations

import re

Version = tuple[int, int, int]

_VERSION = re.compile(r"(?:zfs-(?:kmod-)?)?v?(\d+)\.(\d+)(?:\.(\d+))?")
MIB = 1024**2
GIB = 1024**3


def parse_zfs_version(text: str) -> Version | None:
    """The kernel module's version from `zfs version` (`zfs-kmod-2.1.11-1`) or /sys/module/zfs/version.

    The kmod line wins: userland and module can differ after an upgrade without a reboot, and the module
    is what runs the pool. `zfs version` exists from 0.8; on 0.7 only the sysfs file has it.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in sorted(lines, key=lambda l: not l.startswith("zfs-kmod-")):
        match = _VERSION.match(line)
        if match:
            return int(match[1]), int(match[2]), int(match[3] or 0)
    return None


def label(version: Version | None) -> str:
    return "an unknown OpenZFS version" if version is None else "OpenZFS " + ".".join(map(str, version))


def default_volblocksize(version: Version | None) -> int | None:
    """16K since 2.2.0, 8K before."""
    if version is None:
        return None
    return 16384 if version >= (2, 2, 0) else 8192


def default_compression(version: Version | None) -> str | None:
    """`on` (= lz4) since 2.2.0, `off` before."""
    if version is None:
        return None
    return "on" if version >= (2, 2, 0) else "off"


def default_relatime(version: Version | None) -> str | None:
    """relatime defaults to on since 2.2.0."""
    if version is None:
        return None
    return "on" if version >= (2, 2, 0) else "off"


def default_l2arc_write_max(version: Version | None) -> int | None:
    """8 MiB per feed up to 2.2.6; 32 MiB from 2.2.7 and 2.3.0 (commit 887a3c533b)."""
    if version is None:
        return None
    if version >= (2, 3, 0) or (2, 2, 7) <= version < (2, 3, 0):
        return 32 * MIB
    return 8 * MIB


def default_arc_max(version: Version | None, memtotal: int) -> int | None:
    """The Linux ARC cap when zfs_arc_max=0: 1/2 of RAM before 2.3.0, max(RAM - 1 GiB, 5/8 RAM) from 2.3.0."""
    if version is None:
        return None
    if version >= (2, 3, 0):
        return max(memtotal - GIB, memtotal * 5 // 8)
    return memtotal // 2


def describe_arc_default(version: Version | None) -> str:
    if version is None:
        return "the release's default cap"
    if version >= (2, 3, 0):
        return f"the {label(version)} default cap, max(RAM - 1 GiB, 5/8 RAM)"
    return f"the {label(version)} default cap, 1/2 RAM"


def special_small_blocks_covers_zvols(version: Version | None) -> bool:
    """From 2.4, special_small_blocks applies to zvols too and is compared with the compressed size."""
    return version is not None and version >= (2, 4, 0)
