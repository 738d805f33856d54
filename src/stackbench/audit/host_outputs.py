"""Parsers for the host facts the audit reads: block devices, device links, NVMe formats, mounts, memory, CPU.

lsblk changed its JSON over the years (every value a string before util-linux 2.33, `0B`-style sizes
without `-b`), so values are accepted as numbers or strings. Partitions have no queue/ directory in sysfs:
whatever a rule asks of a partition is asked of its parent disk.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from stackbench.audit.errors import FactsFormatError


@dataclass
class BlockDevice:
    name: str  # kernel name: sda, sda3, nvme0n1, zd16, dm-0
    type: str  # disk, part, lvm, crypt, rom, loop
    parent: str | None = None  # kernel name of the device it sits on (pkname)
    size: int | None = None  # bytes
    physical_sector: int | None = None
    logical_sector: int | None = None
    rotational: bool | None = None
    model: str | None = None
    transport: str | None = None
    fstype: str | None = None
    mountpoints: list[str] = field(default_factory=list)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)) and str(value).strip() in ("0", "1"):
        return str(value).strip() == "1"
    return None


def parse_lsblk(text: str, file: str = "lsblk.json") -> dict[str, BlockDevice]:
    """`lsblk -J [-b] -O` (or a column list): kernel name -> device, children flattened with their parent."""
    try:
        roots = json.loads(text)["blockdevices"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise FactsFormatError(file, None, f"not lsblk JSON ({error})") from None
    devices: dict[str, BlockDevice] = {}

    def walk(entries: Any, parent: str | None) -> None:
        if not isinstance(entries, list):
            raise FactsFormatError(file, None, "`blockdevices`/`children` is not a list")
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise FactsFormatError(file, None, "a block device without a name")
            name = entry.get("kname") or entry["name"]
            mounts = entry.get("mountpoints") or ([entry["mountpoint"]] if entry.get("mountpoint") else [])
            devices[name] = BlockDevice(
                name=name, type=str(entry.get("type") or "?"), parent=entry.get("pkname") or parent,
                size=_int(entry.get("size")), physical_sector=_int(entry.get("phy-sec")),
                logical_sector=_int(entry.get("log-sec")), rotational=_bool(entry.get("rota")),
                model=(entry.get("model") or None), transport=entry.get("tran"), fstype=entry.get("fstype"),
                mountpoints=[m for m in mounts if isinstance(m, str)],
            )
            walk(entry.get("children") or [], name)

    walk(roots, None)
    return devices


def parse_block_queue(text: str, file: str = "sys-block-queue.txt") -> dict[str, dict[str, str]]:
    """`/sys/block/<dev>/queue/<attr>\\t<value>` lines: disk -> attribute -> value."""
    queue: dict[str, dict[str, str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        path, sep, value = line.partition("\t")
        match = re.match(r"/sys/block/([^/]+)/queue/(\w+)$", path)
        if not sep or not match:
            raise FactsFormatError(file, number, "expected `/sys/block/DEV/queue/ATTR<TAB>value`")
        queue.setdefault(match[1], {})[match[2]] = value.strip()
    return queue


def parse_links(text: str, file: str = "dev-disk-links.txt") -> dict[str, str]:
    """`/dev/disk/by-id/NAME<TAB>/dev/sda3` lines: link -> the kernel device it resolves to."""
    links = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        link, sep, target = line.partition("\t")
        if not sep or not link.startswith("/"):
            raise FactsFormatError(file, number, "expected `LINK<TAB>TARGET`")
        links[link] = target.strip()
    return links


@dataclass(frozen=True)
class LbaFormat:
    index: int
    data_size: int
    metadata_size: int
    in_use: bool


_LBAF = re.compile(r"LBA Format\s+(\d+)\s*:\s*Metadata Size:\s*(\d+)\s+bytes\s*-\s*Data Size:\s*(\d+)\s+bytes(.*)$")


def parse_nvme_id_ns(text: str, file: str = "nvme-id-ns.txt") -> dict[str, list[LbaFormat]]:
    """`nvme id-ns -H` per namespace (after a `## /dev/nvmeXnY` line): the LBA formats it offers."""
    result: dict[str, list[LbaFormat]] = {}
    device: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            device = line[3:].strip().rsplit("/", 1)[-1]
            result[device] = []
            continue
        match = _LBAF.search(line)
        if match:
            if device is None:
                raise FactsFormatError(file, number, "LBA format before a `## DEVICE` line")
            result[device].append(LbaFormat(int(match[1]), int(match[3]), int(match[2]), "in use" in match[4]))
    return result


def parse_mounts(text: str) -> list[tuple[str, str, str]]:
    """/proc/self/mounts: (source, mount point, fs type); octal escapes such as \\040 decoded."""
    return [(source, point, fs_type) for source, point, fs_type, _ in _mount_rows(text)]


def parse_mount_options(text: str) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """/proc/self/mounts: mount point -> (source, fs type, options); the last mount of a point wins (it is the
    one in effect)."""
    return {point: (source, fs_type, options) for source, point, fs_type, options in _mount_rows(text)}


def _mount_rows(text: str) -> list[tuple[str, str, str, tuple[str, ...]]]:
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            unescape = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), s)  # noqa: E731
            options = tuple(parts[3].split(",")) if len(parts) >= 4 else ()
            rows.append((unescape(parts[0]), unescape(parts[1]), parts[2], options))
    return rows


def parse_swaps(text: str) -> list[str]:
    """/proc/swaps: the swap devices and files in use."""
    return [line.split()[0] for line in text.splitlines()[1:] if line.strip()]


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo in bytes."""
    values = {}
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1]) * (1024 if len(parts) > 2 and parts[2] == "kB" else 1)
    return values


def parse_cpu_flags(text: str) -> set[str]:
    """The first `flags` line of /proc/cpuinfo (x86); other architectures have `Features`."""
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()
