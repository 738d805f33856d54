"""A run's facts as a table of what matters when reading its numbers: the machine (host or virtual
machine), CPU and AES-NI, RAM, kernel, fio, the target's file system and the devices under it with their
sector sizes, ZFS where known, and an `ab` session's commands. Rows appear only for facts the run holds
(an imported run knows its fio version and file, little else)."""

from __future__ import annotations

from typing import Any

from stackbench.report.tabular import Tabular
from stackbench.model.results import Run
from stackbench.base.units import format_bytes


def facts_table(run: Run) -> Tabular:
    facts = run.facts or {}
    system = facts.get("system") or {}
    target = facts.get("target") or {}
    rows: list[list[str]] = []

    def add(name: str, value: Any) -> None:
        if value not in (None, "", [], {}):
            rows.append([name, str(value)])

    add("Machine", _machine(system))
    add("Operating system", system.get("os"))
    add("Kernel", " ".join(str(x) for x in (system.get("kernel"), system.get("arch")) if x))
    cpu = system.get("cpu_model")
    if cpu or system.get("cpu_count"):
        count = system.get("cpu_count")
        add("CPU", f"{cpu or 'unknown model'}" + (f", {count} logical CPUs" if count else ""))
    aes = system.get("cpu_flags_aes")
    add("AES-NI", None if aes is None else "visible" if aes else "not visible (disk encryption runs in software)")
    add("RAM", format_bytes(system["ram_bytes"]) if system.get("ram_bytes") else None)
    add("fio", facts.get("fio_version"))
    add("stackbench", facts.get("stackbench_version") or system.get("stackbench"))
    if run.target or target.get("path"):
        add("Target", f"{run.target or target.get('path')}" + (f" ({target['kind']})" if target.get("kind") else ""))
    add("Test file", target.get("file") if target.get("kind") != "device" else None)
    if target.get("fs_type"):
        where = ", ".join(
            f"{name} {target[key]}" for name, key in (("mounted at", "mount_point"), ("from", "mount_source"))
            if target.get(key)
        )
        add("File system", f"{target['fs_type']}" + (f" ({where})" if where else ""))
    add("Mount options", target.get("mount_options"))
    add("ZFS dataset", target.get("zfs_dataset"))
    for name, value in sorted((facts.get("zfs") or {}).items()) if isinstance(facts.get("zfs"), dict) else ():
        add(f"ZFS {name}", value)
    for device in target.get("block_devices") or []:
        if isinstance(device, dict):
            add(f"Device {device.get('name') or '?'}", _device(device))
    diskinfo = facts.get("diskinfo")
    if isinstance(diskinfo, dict):
        add("diskinfo device", ", ".join(
            f"{key} {diskinfo[key]}" for key in ("device", "description", "ident", "sector_size", "media_size_human")
            if diskinfo.get(key) not in (None, "")
        ))
    add("Imported from", facts.get("imported_from"))
    add("SHA-256 of the file", facts.get("sha256"))
    ab = facts.get("ab")
    if isinstance(ab, dict):
        add("ab session", f"{ab.get('session', '?')[:12]}, arm {ab.get('arm', '?')}, {ab.get('rounds', '?')} rounds")
        add("ab round order", ab_round_order(ab))
        add("ab command", ab.get("command"))
        add("ab prepare", ab.get("prepare"))
    return Tabular(headers=["Fact", "Value"], rows=rows, title="Facts", no_wrap=frozenset({0}), fold=frozenset({1}))


def ab_round_order(ab: dict[str, Any]) -> str:
    """`AB BA AB BA`: which arm an `ab` session measured first in each round. Sessions stored before the
    rounds were counterbalanced have no `orders`: they measured A first in every round."""
    orders = ab.get("orders")
    return " ".join(map(str, orders)) if isinstance(orders, list) else "A first in every round"


def _machine(system: dict[str, Any]) -> str | None:
    """`host-1, virtual machine (kvm), in a docker container` or `host-1, bare metal`."""
    if not system:
        return None
    bits = [str(system.get("hostname") or "unnamed host")]
    virt = system.get("virtualization")
    if system.get("is_vm"):
        bits.append(f"virtual machine ({virt})" if virt else "virtual machine")
    elif system.get("is_vm") is False:
        bits.append("bare metal")
    container = system.get("container")
    if container and container != "none":
        bits.append(f"in a {container} container")
    return ", ".join(bits)


def _device(device: dict[str, Any]) -> str:
    """`Samsung SSD 980, 1.0 TiB, sectors 512 B logical / 4096 B physical, SSD, scheduler none, serial disk-A`."""
    bits = []
    model = " ".join(str(device[k]) for k in ("vendor", "model") if device.get(k))
    if model:
        bits.append(model)
    if device.get("role") and device["role"] != "disk":
        bits.append(str(device["role"]) + (f" {device['dm_name']}" if device.get("dm_name") else ""))
    if device.get("size_bytes"):
        bits.append(format_bytes(device["size_bytes"]))
    logical, physical = device.get("logical_sector_size"), device.get("physical_sector_size")
    if logical or physical:
        bits.append(f"sectors {logical or '?'} B logical / {physical or '?'} B physical")
    if device.get("rotational") is not None:
        bits.append("rotational" if device["rotational"] else "non-rotational")
    if device.get("scheduler"):
        bits.append(f"scheduler {device['scheduler']}")
    if device.get("serial"):
        bits.append(f"serial {device['serial']}")
    return ", ".join(bits) or "-"
