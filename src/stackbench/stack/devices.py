"""Block-device layers from sysfs: disks, partitions, loop devices, device-mapper and md arrays.

Every block device is in /sys/class/block with the queue settings the audit reads (sector sizes,
scheduler, read-ahead, rotational); a partition is under its disk, a dm or md device lists what it sits on
in `slaves/`, and a loop device names its backing file in `loop/`. A zd device is a zvol, which the
discovery names through the /dev/zvol links.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from stackbench.stack.layer import Layer, Resolver
from stackbench.stack.mapper import dm_layer
from stackbench.stack.throttle import device_throttle
from stackbench.stack.tools import Tools

SYS_BLOCK = Path("/sys/class/block")
VIRTUAL_TRANSPORTS = ("virtio", "scsi", "nvme", "ata", "xen")  # how a VM's disks are attached
# The first that the device's sysfs path holds: a SATA or USB disk sits on a SCSI host (its path has
# /target too), a virtio-scsi disk under the virtio device of its controller.
_TRANSPORTS = (("/nvme", "nvme"), ("/usb", "usb"), ("/ata", "ata"), ("/target", "scsi"), ("/virtio", "virtio"),
               ("/mmc", "mmc"), ("/vbd-", "xen"), ("/devices/virtual/", "virtual"))


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode(errors="replace").strip()
    except OSError:
        return None


def _scsi_serial(name: str) -> str | None:
    """A SCSI disk's unit serial number (VPD page 0x80: a 4-byte header, then the text)."""
    page = _read(SYS_BLOCK / name / "device" / "vpd_pg80")
    return page[4:].strip() or None if page and len(page) > 4 else None


def _int(path: Path) -> int | None:
    text = _read(path)
    return int(text) if text is not None and text.lstrip("-").isdigit() else None


def queue_settings(name: str) -> dict[str, Any]:
    """The request queue's settings (a partition has none of its own: its disk's apply), and the cgroup
    throttle that holds this process's requests before the queue takes them, where one does."""
    queue = SYS_BLOCK / name / "queue"
    scheduler = _read(queue / "scheduler")
    if scheduler and "[" in scheduler:
        scheduler = scheduler.split("[", 1)[1].split("]", 1)[0]
    rotational = _int(queue / "rotational")
    settings = {
        "logical_sector_size": _int(queue / "logical_block_size"),
        "physical_sector_size": _int(queue / "physical_block_size"),
        "scheduler": scheduler,
        "read_ahead_kb": _int(queue / "read_ahead_kb"),
        "rotational": None if rotational is None else bool(rotational),
        "write_cache": _read(queue / "write_cache"),
        "cgroup_throttle": device_throttle(_read(SYS_BLOCK / name / "dev") or ""),
    }
    return {key: value for key, value in settings.items() if value is not None}


def _size(name: str) -> dict[str, Any]:
    sectors = _int(SYS_BLOCK / name / "size")
    return {} if sectors is None else {"size_bytes": sectors * 512}


def _slaves(name: str) -> list[str]:
    try:
        return sorted(p.name for p in (SYS_BLOCK / name / "slaves").iterdir())
    except OSError:
        return []


def transport(name: str) -> str | None:
    """How the disk is attached (virtio, nvme, scsi, ata, usb, ...), from where sysfs places it."""
    try:
        where = os.path.realpath(SYS_BLOCK / name)
    except OSError:
        return None
    return next((word for part, word in _TRANSPORTS if part in where), None)


def zvol_links() -> dict[str, str]:
    """zdN -> the zvol's name, from the /dev/zvol/POOL/NAME links udev makes."""
    found: dict[str, str] = {}
    for directory, _dirs, files in os.walk("/dev/zvol"):
        for file in files:
            link = os.path.join(directory, file)
            target = os.path.basename(os.path.realpath(link))
            if re.fullmatch(r"zd\d+", target):
                found.setdefault(target, os.path.relpath(link, "/dev/zvol"))
    return found


def block_layer(name: str, resolver: Resolver, tools: Tools) -> Layer:
    """The layer of block device `name` and everything under it."""
    node = SYS_BLOCK / name
    if not node.exists():
        return Layer("unknown", f"/dev/{name}", notes=[f"{name} is not in /sys/class/block"])
    if (node / "partition").exists():
        return _partition(name, resolver)
    if (node / "loop" / "backing_file").exists():
        return _loop(name, resolver)
    if (node / "dm").is_dir():
        layer = dm_layer(name, _read(node / "dev") or "", _read(node / "dm" / "name") or "",
                         _read(node / "dm" / "uuid") or "", tools)
    elif (node / "md").is_dir():
        layer = _md(name)
    elif re.fullmatch(r"zd\d+", name):
        dataset = zvol_links().get(name)
        if dataset is not None:
            return resolver.zvol(dataset, name)
        layer = Layer("zvol", f"/dev/{name}", devices=[name], notes=["no /dev/zvol link names this zvol"])
    else:
        return _disk(name)
    layer.settings.update({**_size(name), **queue_settings(name)})
    layer.children = [resolver.block(slave) for slave in _slaves(name)]
    return layer


def _partition(name: str, resolver: Resolver) -> Layer:
    node = SYS_BLOCK / name
    start = _int(node / "start")
    settings: dict[str, Any] = {"number": _int(node / "partition"), **_size(name)}
    if start is not None:
        settings["start_bytes"] = start * 512
    alignment = _int(node / "alignment_offset")
    if alignment:
        settings["alignment_offset"] = alignment
    disk = node.resolve().parent.name
    return Layer("partition", f"/dev/{name}", settings, devices=[name], children=[resolver.block(disk)])


def _loop(name: str, resolver: Resolver) -> Layer:
    node = SYS_BLOCK / name
    backing = _read(node / "loop" / "backing_file") or ""
    settings: dict[str, Any] = {
        "backing_file": backing, "offset": _int(node / "loop" / "offset"),
        "sizelimit": _int(node / "loop" / "sizelimit"), "direct_io": _read(node / "loop" / "dio") == "1",
        "read_only": _read(node / "ro") == "1", **_size(name), **queue_settings(name),
    }
    layer = Layer("loop", f"/dev/{name}", settings, devices=[name])
    if backing.endswith(" (deleted)"):
        layer.notes.append("its backing file was deleted: what is under it cannot be followed")
    elif backing:
        layer.children = [resolver.path(backing)]
    return layer


def _md(name: str) -> Layer:
    md = SYS_BLOCK / name / "md"
    chunk = _int(md / "chunk_size")
    settings: dict[str, Any] = {
        "level": _read(md / "level"), "raid_disks": _int(md / "raid_disks"),
        "metadata": _read(md / "metadata_version"), "array_state": _read(md / "array_state"),
        "sync_action": _read(md / "sync_action"), "degraded": _int(md / "degraded"),
    }
    if chunk:
        settings["chunk_bytes"] = chunk
    members = {}
    for slave in _slaves(name):
        state = _read(md / f"dev-{slave}" / "state")
        if state is not None:
            members[slave] = state
    if members:
        settings["members"] = members
    return Layer("md", f"/dev/{name}", {k: v for k, v in settings.items() if v is not None}, devices=[name])


def _disk(name: str) -> Layer:
    node = SYS_BLOCK / name
    settings: dict[str, Any] = {
        "transport": transport(name), "model": _read(node / "device" / "model"),
        "vendor": _read(node / "device" / "vendor"),
        "serial": _read(node / "device" / "serial") or _read(node / "serial") or _scsi_serial(name),
        **_size(name), **queue_settings(name),
    }
    return Layer("disk", f"/dev/{name}", {k: v for k, v in settings.items() if v not in (None, "")}, devices=[name])
