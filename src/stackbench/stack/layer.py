"""A layer of a storage stack, and the discovered stack: data only, the shape `stack --json` and
`facts.stack` share (docs/json.md).

Each layer names what per-second telemetry will read for it: `devices` are the kernel names of its rows in
/proc/diskstats (a disk, a partition, dm-0, md0, loop1, zd0), and `zfs` the pool, vdev and dataset names
that `zpool iostat -v` and the kstats under /proc/spl/kstat/zfs use. A layer with neither (a directory, a
file system on a network) has no counters of its own; its children do.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Protocol

VERSION = 1

# What each kind of layer is (docs/stack.md has the same list with what each reads).
KINDS: dict[str, str] = {
    "file": "a file: the target, a loop device's backing file or a ZFS file vdev",
    "directory": "the target directory, where a run measures a scratch file",
    "filesystem": "a mounted file system (ext4, xfs, btrfs, tmpfs, NFS, ...)",
    "zfs-dataset": "a ZFS file system",
    "zvol": "a ZFS volume, a block device (zdN) whose blocks the pool stores",
    "zfs-pool": "a ZFS pool",
    "zfs-vdev": "a top-level vdev of a pool, in its allocation class (normal, special, logs, cache, ...)",
    "dm-crypt": "a dm-crypt (LUKS or plain) mapping",
    "lvm": "an LVM logical volume",
    "dm": "another device-mapper device",
    "md": "a Linux software RAID array",
    "partition": "a partition of a disk",
    "loop": "a loop device, showing a file (or a device) as a block device",
    "disk": "a whole block device as the kernel sees it (in a VM: a virtual disk)",
    "host-backing": "what a VM disk is on the host, from the host's captured facts",
    "unknown": "something the discovery could not read",
}


@dataclass
class Layer:
    """One node of the tree: what it is, its settings, where its counters are, and what is under it."""

    kind: str  # one of KINDS
    name: str  # /dev/dm-0, tank/images, mirror-0, /srv/data (a path, a device or a ZFS name)
    settings: dict[str, Any] = field(default_factory=dict)  # what the audit reads: sector sizes, cipher, ashift
    devices: list[str] = field(default_factory=list)  # kernel names of its /proc/diskstats rows
    zfs: dict[str, str] = field(default_factory=dict)  # pool, vdev, dataset: for zpool iostat and the kstats
    notes: list[str] = field(default_factory=list)  # what could not be read, and why
    children: list[Layer] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "name": self.name, "settings": dict(self.settings), "devices": list(self.devices),
            "zfs": dict(self.zfs), "notes": list(self.notes), "children": [c.to_json() for c in self.children],
        }

    @classmethod
    def from_json(cls, data: Any, depth: int = 0) -> Layer:
        """A layer from saved facts; ValueError when it does not have the shape `to_json` writes."""
        if not isinstance(data, dict) or depth > 64:
            raise ValueError("a stack layer is not an object")
        kind, name = data.get("kind"), data.get("name")
        settings, devices, zfs = data.get("settings") or {}, data.get("devices") or [], data.get("zfs") or {}
        notes, children = data.get("notes") or [], data.get("children") or []
        if not (isinstance(kind, str) and isinstance(name, str) and isinstance(settings, dict)
                and isinstance(devices, list) and isinstance(zfs, dict) and isinstance(notes, list)
                and isinstance(children, list)):
            raise ValueError(f"stack layer {name!r} has fields of the wrong type")
        return cls(kind, name, dict(settings), [str(d) for d in devices], {str(k): str(v) for k, v in zfs.items()},
                   [str(n) for n in notes], [cls.from_json(c, depth + 1) for c in children])

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Layer]]:
        """Every layer under this one, this one first, with its depth."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def label(self) -> str:
        """`ext4 /srv/data`, `dm-crypt /dev/dm-0 (luks)`: the kind's word and the name, for one line."""
        word = {"filesystem": str(self.settings.get("fs_type") or "file system"),
                "zfs-dataset": "dataset", "zfs-pool": "pool", "zfs-vdev": f"vdev {self.settings.get('class', '')}".strip(),
                "host-backing": "on the host"}.get(self.kind, self.kind)
        return f"{word} {self.name}"


@dataclass(frozen=True)
class CounterNames:
    """Every counter a per-second sampler of a stack reads, each name once, top down: the names are the
    kernel's and ZFS's own, so the sampler needs nothing else from the tree. Empty where the stack has none
    (a directory on tmpfs: no diskstats row; no ZFS: no pool)."""

    diskstats: tuple[str, ...]  # kernel names, as in column 3 of /proc/diskstats: vda, vda1, dm-0, md0, loop1, zd0
    pools: tuple[str, ...]  # for `zpool iostat -Hpv POOL` and /proc/spl/kstat/zfs/POOL/
    vdevs: tuple[tuple[str, str], ...]  # (pool, vdev) as `zpool iostat -v` prints the vdev: mirror-0, /dev/sda1
    datasets: tuple[tuple[str, str], ...]  # (pool, dataset or zvol): the objset kstats under the pool's kstats


@dataclass(frozen=True)
class CountedLayer:
    """A block device of the stack whose /proc/diskstats row telemetry reads, where it sits in the tree:
    `depth` counts the counted devices above it, and `bottom` says nothing counted is under it (a disk,
    a pool's leaf: where the bytes reach the media, and amplification is judged)."""

    device: str  # its kernel name: loop3, dm-0, sda
    kind: str  # its layer's kind (KINDS)
    name: str  # its layer's name: /dev/loop3
    depth: int
    bottom: bool
    throttle: str | None = None  # a cgroup throttle that held the discovering process's requests to it
    pool: str | None = None  # the ZFS pool it is a leaf's device of (vdd1 and vdd of tank's mirror), if any


# The order `zpool iostat -v` prints a pool's classes in (cmd/zpool/zpool_main.c print_vdev_stats: the normal
# vdevs, then dedup, special, logs, then the cache; spares it does not print)
ZPOOL_IOSTAT_CLASSES = ("normal", "dedup", "special", "logs", "cache", "spares")


@dataclass(frozen=True)
class VdevPlace:
    """A row `zpool iostat -vP POOL` prints, where it sits in the pool: the pool (`level` 0), a top-level
    vdev (1: mirror-0, raidz1-0, or a single disk's path) in its class, or a leaf under one (2)."""

    pool: str
    name: str  # as zpool iostat -P prints it: tank, mirror-0, /dev/vdd1
    kind: str  # "pool", the top-level vdev's type (mirror, raidz1, disk, file, ...), or "leaf"
    vdev_class: str | None  # normal, special, dedup, logs, cache, spares; None for the pool
    level: int
    # the block devices whose /proc/diskstats rows summed are the row: a leaf's own (vdd1), a vdev's leaves',
    # the pool's every leaf but the cache's and spares'; () in a pool with a leaf that is no block device (a file)
    devices: tuple[str, ...] = ()


@dataclass
class Stack:
    """The layers under one target: the tree, and whether this machine is a VM (whose disks' backing is
    on the host)."""

    target: str
    root: Layer
    virtualization: str | None = None  # systemd-detect-virt's answer: none, kvm, qemu, ...; None: unknown

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "target": self.target, "virtualization": self.virtualization,
                "root": self.root.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> Stack:
        """The stack a run's facts saved (`facts.stack`); ValueError when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("target"), str) or "root" not in data:
            raise ValueError("not a saved stack (no target or root)")
        if data.get("version") != VERSION:
            raise ValueError(f"a saved stack of version {data.get('version')!r}, this stackbench reads {VERSION}")
        virt = data.get("virtualization")
        return cls(data["target"], Layer.from_json(data["root"]), virt if isinstance(virt, str) else None)

    def data_path(self) -> list[Layer]:
        """The layers data goes through from the target down, taking the first child at each branch (the
        first leg of a mirror, the first PV of a volume group): what `layers --auto` measures."""
        path, layer = [self.root], self.root
        while layer.children:
            layer = layer.children[0]
            path.append(layer)
        return path

    def counter_names(self) -> CounterNames:
        """What layer telemetry samples for this stack: every layer's `devices` and `zfs` names (a layer
        with neither, a file system or a directory, is counted by the layers under it)."""
        diskstats: dict[str, None] = {}
        pools: dict[str, None] = {}
        vdevs: dict[tuple[str, str], None] = {}
        datasets: dict[tuple[str, str], None] = {}
        for _, layer in self.root.walk():
            diskstats.update(dict.fromkeys(layer.devices))
            pool = layer.zfs.get("pool")
            if pool:
                pools[pool] = None
                if layer.zfs.get("vdev"):
                    vdevs[(pool, layer.zfs["vdev"])] = None
                if layer.zfs.get("dataset"):
                    datasets[(pool, layer.zfs["dataset"])] = None
        return CounterNames(tuple(diskstats), tuple(pools), tuple(vdevs), tuple(datasets))

    def counted_layers(self) -> list[CountedLayer]:
        """Every block device telemetry samples, each once, top down (depth first, as `counter_names`)."""
        found: dict[str, CountedLayer] = {}

        def visit(layer: Layer, depth: int, pool: str | None) -> bool:
            """Add the layer's devices and those under it; whether any was counted."""
            pool = layer.name if layer.kind == "zfs-pool" else pool
            counted = [device for device in layer.devices if device not in found]
            below = depth + 1 if counted else depth  # a row met again (a leaf vdev's partition) is no level
            for device in counted:
                throttle = layer.settings.get("cgroup_throttle")
                found[device] = CountedLayer(device, layer.kind, layer.name, depth, True,
                                             throttle if isinstance(throttle, str) else None, pool)
            under = [visit(child, below, pool) for child in layer.children]
            if any(under):
                for device in counted:
                    found[device] = replace(found[device], bottom=False)
            return bool(layer.devices) or any(under)

        visit(self.root, 0, None)
        return list(found.values())

    def vdev_places(self) -> list[VdevPlace]:
        """Every row `zpool iostat -vP` prints for the stack's pools, in its order: the pool, then each class's
        top-level vdevs (normal first: ZPOOL_IOSTAT_CLASSES), each followed by its leaves (a single-disk
        vdev is its own leaf: one row); each with the block devices its figures are the sum of."""
        found: dict[tuple[str, str], VdevPlace] = {}
        for _, layer in self.root.walk():
            if layer.kind != "zfs-pool":
                continue
            pool, pooled = layer.name, []  # type: str, list[str]
            ranked = sorted((child for child in layer.children if child.kind == "zfs-vdev"),
                            key=lambda v: ZPOOL_IOSTAT_CLASSES.index(v.settings.get("class"))
                            if v.settings.get("class") in ZPOOL_IOSTAT_CLASSES else len(ZPOOL_IOSTAT_CLASSES))
            leaves = {vdev.name: [(str(leaf.zfs.get("vdev") or ""), leaf.devices[0] if leaf.devices else "")
                                  for leaf in vdev.children] for vdev in ranked}
            # a pool with a leaf that is no block device (a file vdev) is counted by zpool alone, every row alike
            blocks = all(leaves.values()) and all(device for under in leaves.values() for _, device in under)
            rows: list[VdevPlace] = []
            for vdev in ranked:
                vdev_class = str(vdev.settings.get("class") or "normal")
                devices = tuple(device for _, device in leaves[vdev.name]) if blocks else ()
                kind = str(vdev.settings.get("type") or "vdev")
                rows.append(VdevPlace(pool, vdev.name, kind, vdev_class, 1, devices))
                rows += [VdevPlace(pool, name, "leaf", vdev_class, 2, (device,) if blocks else ())
                         for name, device in leaves[vdev.name] if name and name != vdev.name]
                if vdev_class not in ("cache", "spares"):
                    pooled += devices
            for place in [VdevPlace(pool, pool, "pool", None, 0, tuple(pooled)), *rows]:
                found.setdefault((pool, place.name), place)
        return list(found.values())

    def chain(self) -> str:
        """The data path on one line, top down: `ext4 /mnt/x > loop /dev/loop2 > file /m/img > ...`."""
        return " > ".join(layer.label() for layer in self.data_path())


def counted_layers_of(data: Any) -> list[CountedLayer] | None:
    """The counted devices of a run's saved stack (`facts.stack`), None where the run saved none (an older
    run, a discovery that failed): a layer table then falls back on the sampled devices' order."""
    try:
        return Stack.from_json(data).counted_layers()
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def vdev_places_of(data: Any) -> list[VdevPlace] | None:
    """The `zpool iostat -v` rows of a run's saved stack (`facts.stack`), None where it saved none."""
    try:
        return Stack.from_json(data).vdev_places()
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


class Resolver(Protocol):
    """What the per-kind builders ask the discovery for, so a loop device's backing file or a ZFS leaf gets
    its own stack without the builders importing each other."""

    def path(self, path: str) -> Layer: ...
    def block(self, name: str) -> Layer: ...
    def zvol(self, dataset: str, device: str | None) -> Layer: ...
