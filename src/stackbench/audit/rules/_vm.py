"""Helpers for rules over Proxmox qemu-server configs (disk keys and their options)."""

from __future__ import annotations

import re
from typing import Iterator

DISK_KEY = re.compile(r"^(ide|sata|scsi|virtio)\d+$")


def disks(config: dict[str, str]) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(key, volume, options) for every disk that is not a CD-ROM."""
    for key, value in config.items():
        if not DISK_KEY.match(key):
            continue
        volume, *rest = value.split(",")
        options = dict(part.split("=", 1) for part in rest if "=" in part)
        if options.get("media") == "cdrom" or volume in ("none", "cdrom"):
            continue
        yield key, volume, options
