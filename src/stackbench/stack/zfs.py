"""ZFS layers: a dataset or zvol, its pool, the pool's top-level vdevs by class, and their leaves.

Read with the commands the audit's probe saves and parsed by the audit's own parsers (audit/zfs_outputs.py):
`zfs get -Hp`, `zpool get -Hp`, `zpool status -P` (leaves as device paths), and each vdev's real ashift
from `zpool get ashift POOL all-vdevs` (OpenZFS 2.2+) or `zdb -C POOL` (root), matched to the status
vdevs as the audit matches them. The pool property `ashift` is only the hint for new vdevs.
"""

from __future__ import annotations

import os
from typing import Any

from stackbench.audit.errors import FactsFormatError
from stackbench.audit.facts import Facts, assign_ashift
from stackbench.audit.zfs_outputs import (
    parse_vdev_properties, parse_zdb_config, parse_zfs_get, parse_zpool_get, parse_zpool_status,
)
from stackbench.stack.layer import Layer, Resolver
from stackbench.stack.tools import Tools

DATASET_PROPERTIES = ("type", "recordsize", "volblocksize", "volsize", "compression", "sync", "logbias",
                      "atime", "relatime", "primarycache", "secondarycache", "dedup", "copies", "encryption",
                      "special_small_blocks", "redundant_metadata", "refreservation", "mountpoint", "available")
POOL_PROPERTIES = ("ashift", "autotrim", "health", "size", "free", "fragmentation")
_SIZES = ("recordsize", "volblocksize", "volsize", "special_small_blocks", "refreservation", "available", "size",
          "free")


def dataset_properties(tools: Tools, name: str) -> tuple[dict[str, Any], str]:
    """The settings of dataset or zvol `name` that the audit reads (numbers as numbers), or why not."""
    text, why = tools.output("zfs", "get", "-Hp", "-o", "name,property,value,source", ",".join(DATASET_PROPERTIES),
                             name)
    if text is None:
        return {}, why
    try:
        props = parse_zfs_get(text).get(name, {})
    except FactsFormatError as error:
        return {}, str(error)
    return {key: _value(key, value) for key, (value, _source) in props.items() if value not in ("-", "")}, ""


def _value(key: str, value: str) -> Any:
    return int(value) if key in _SIZES and value.isdigit() else value


def dataset_layer(name: str, device: str | None, resolver: Resolver, tools: Tools) -> Layer:
    """A ZFS file system or zvol (`device`: its zdN, when known) over its pool."""
    settings, why = dataset_properties(tools, name)
    kind = "zvol" if settings.get("type") == "volume" or device else "zfs-dataset"
    settings.pop("type", None)
    if kind == "zvol":
        for key in ("recordsize", "mountpoint", "atime", "relatime"):
            settings.pop(key, None)
    else:
        settings.pop("volblocksize", None)
    pool = name.split("/", 1)[0]
    layer = Layer(kind, name, settings, devices=[device] if device else [], zfs={"pool": pool, "dataset": name},
                  notes=[f"properties unknown: {why}"] if why else [])
    layer.children = [pool_layer(pool, resolver, tools)]
    return layer


def pool_layer(pool: str, resolver: Resolver, tools: Tools) -> Layer:
    """A pool and its top-level vdevs (normal class first, then special, dedup, logs, cache, spares)."""
    layer = Layer("zfs-pool", pool, zfs={"pool": pool})
    text, why = tools.output("zpool", "get", "-Hp", ",".join(POOL_PROPERTIES), pool)
    if text is not None:
        try:
            layer.settings = {k: _value(k, v) for k, v in parse_zpool_get(text).get(pool, {}).items()
                              if v not in ("-", "")}
            layer.settings["ashift_hint"] = layer.settings.pop("ashift", None)
        except FactsFormatError as error:
            layer.notes.append(str(error))
    else:
        layer.notes.append(f"pool properties unknown: {why}")
    status, why = tools.output("zpool", "status", "-P", pool)
    if status is None:
        layer.notes.append(f"vdevs unknown: {why}")
        return layer
    try:
        facts = _vdev_facts(pool, status, tools)
    except FactsFormatError as error:
        layer.notes.append(str(error))
        return layer
    order = ("normal", "special", "dedup", "logs", "cache", "spares")
    vdevs = sorted(facts.vdevs.get(pool, []), key=lambda v: order.index(v.vdev_class) if v.vdev_class in order else 9)
    for vdev in vdevs:
        settings: dict[str, Any] = {"type": vdev.type, "class": vdev.vdev_class}
        if vdev.ashift is not None:
            settings.update({"ashift": vdev.ashift, "ashift_from": vdev.ashift_source})
        child = Layer("zfs-vdev", vdev.name, settings, zfs={"pool": pool, "vdev": vdev.name})
        child.children = [_leaf(pool, leaf, resolver) for leaf in vdev.leaves]
        layer.children.append(child)
    return layer


def _vdev_facts(pool: str, status: str, tools: Tools) -> Facts:
    """The pool's vdevs with their ashift, as the audit reads them from the same outputs."""
    facts = Facts()
    facts.vdevs = parse_zpool_status(status)
    facts.links = {leaf: os.path.realpath(leaf) for vdevs in facts.vdevs.values() for vdev in vdevs
                   for leaf in vdev.leaves if leaf.startswith("/dev/")}
    try:  # the whole disks, by which `zpool get all-vdevs` names a leaf whose status path is a partition
        facts.block_queue = {name: {} for name in os.listdir("/sys/block")}
    except OSError:
        pass
    properties, _ = tools.output("zpool", "get", "-Hp", "ashift", pool, "all-vdevs")
    if properties is not None:
        facts.vdev_properties = parse_vdev_properties(f"## {pool}\n{properties}")
    zdb = None
    if properties is None and os.geteuid() == 0:
        config, _ = tools.output("zdb", "-C", pool)
        zdb = parse_zdb_config(config) if config is not None else None
    assign_ashift(facts, zdb or {})
    return facts


def _leaf(pool: str, leaf: str, resolver: Resolver) -> Layer:
    """A vdev's leaf: a device path (partition or disk, followed down) or a file vdev (followed into its
    own file system); named for zpool iostat as zpool status -P prints it."""
    if leaf.startswith("/dev/"):
        layer = resolver.block(os.path.basename(os.path.realpath(leaf)))
        if leaf != layer.name:
            layer.settings.setdefault("zfs_path", leaf)
    else:
        layer = resolver.path(leaf)
    layer.zfs = {**layer.zfs, "pool": pool, "vdev": leaf}
    return layer
