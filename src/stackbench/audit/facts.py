"""Facts for the audit: a directory of raw probe outputs (`stackbench.audit.probe`), read into one model.

Rules read `Facts` only, never the live system, so every rule can be tested from saved facts and another
machine's facts can be audited anywhere. A missing file means the fact is unknown; a file in a format this
version does not know is recorded in `Facts.problems` (file and line) and treated as unknown, so one odd
file neither stops the audit nor is read half-way.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from stackbench.audit import host_outputs as host
from stackbench.audit import zfs_outputs as zfs
from stackbench.audit.errors import FactsFormatError
from stackbench.audit.versions import Version, parse_zfs_version
from stackbench.audit.vm import DiskLocation, Storage, Vm, VmDisk, locate_volume, parse_libvirt_xml, parse_qm_conf, \
    parse_storage_cfg
from stackbench.audit.zfs_outputs import Vdev

__all__ = ["Facts", "Vdev", "load_facts"]
T = TypeVar("T")
# systemd-detect-virt's container names (its --container list); everything else it prints is a VM.
CONTAINERS = ("openvz", "lxc", "lxc-libvirt", "systemd-nspawn", "docker", "podman", "rkt", "wsl", "proot", "pouch")


@dataclass
class Facts:
    zfs_version: str | None = None  # as printed, e.g. zfs-kmod-2.1.11-1+deb12u1
    version: Version | None = None
    pools: dict[str, dict[str, str]] = field(default_factory=dict)
    datasets: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # name -> prop -> (value, source)
    vdevs: dict[str, list[Vdev]] = field(default_factory=dict)  # pool -> top-level vdevs
    vdev_properties: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # 2.2+
    pool_sizes: dict[str, int] = field(default_factory=dict)
    class_space: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (pool, class) -> (size, alloc)
    arcstats: dict[str, int] = field(default_factory=dict)
    module_parameters: dict[str, str] = field(default_factory=dict)
    block_queue: dict[str, dict[str, str]] = field(default_factory=dict)  # disk -> {physical_block_size: ...}
    block_devices: dict[str, host.BlockDevice] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # /dev/disk/by-id/X -> /dev/sda3
    nvme_formats: dict[str, list[host.LbaFormat]] = field(default_factory=dict)
    mounts: list[tuple[str, str, str]] = field(default_factory=list)
    swaps: list[str] | None = None
    numa_nodes: int | None = None
    meminfo: dict[str, int] = field(default_factory=dict)  # bytes
    cmdline: str | None = None
    kernel_config: dict[str, str] = field(default_factory=dict)
    mem_auto_init: str | None = None  # the kernel's "mem auto-init: ..." line
    cpu_flags: set[str] = field(default_factory=set)
    virt: str | None = None  # systemd-detect-virt: none, kvm, ...
    vms: list[Vm] = field(default_factory=list)
    storages: dict[str, Storage] | None = None  # Proxmox storage.cfg; None when not in the facts
    image_files: dict[str, int] | None = None  # path -> bytes, when the probe listed them
    problems: list[str] = field(default_factory=list)

    # --- datasets -------------------------------------------------------------------------------------
    def dataset_prop(self, dataset: str, prop: str) -> str | None:
        value = self.datasets.get(dataset, {}).get(prop)
        return value[0] if value else None

    def dataset_source(self, dataset: str, prop: str) -> str | None:
        value = self.datasets.get(dataset, {}).get(prop)
        return value[1] if value else None

    def _of_type(self, kind: str) -> list[str]:
        return [name for name, props in self.datasets.items() if props.get("type", ("",))[0] == kind]

    def zvols(self) -> list[str]:
        return self._of_type("volume")

    def filesystems(self) -> list[str]:
        return self._of_type("filesystem")

    def dataset_of_path(self, path: str) -> str | None:
        """The ZFS file system whose mount point is the longest prefix of `path`."""
        best, best_len = None, -1
        candidates = [(source, point) for source, point, fstype in self.mounts if fstype in ("zfs", "fuse.zfs")]
        if not candidates:
            candidates = [(name, self.dataset_prop(name, "mountpoint") or "") for name in self.filesystems()]
        for dataset, point in candidates:
            if point.startswith("/") and (path == point or path.startswith(point.rstrip("/") + "/")):
                if len(point) > best_len:
                    best, best_len = dataset, len(point)
        return best

    # --- devices ---------------------------------------------------------------------------------------
    def kernel_name(self, leaf: str) -> str:
        """The kernel device a vdev leaf names: vdb1 for /dev/vdb1, sda3 for ata-...-part3 via /dev/disk links."""
        candidates = [leaf] if leaf.startswith("/") else [
            f"/dev/disk/{kind}/{leaf}" for kind in ("by-id", "by-vdev", "by-path", "by-partuuid", "by-uuid",
                                                    "by-partlabel", "by-label")] + [f"/dev/{leaf}"]
        for candidate in candidates:
            if candidate in self.links:
                return self.links[candidate].rsplit("/", 1)[-1]
        return leaf.rsplit("/", 1)[-1]

    def disk_of(self, leaf: str) -> str | None:
        """The whole disk under a leaf (partitions have no queue/ directory in sysfs), or None if unknown."""
        name = self.kernel_name(leaf)
        for _ in range(8):
            device = self.block_devices.get(name)
            if device is None or device.type == "disk" or not device.parent:
                break
            name = device.parent
        if name in self.block_queue or name in self.block_devices:
            return name
        for pattern in (r"^((?:nvme\d+n|mmcblk|loop|nbd)\d+)p\d+$", r"^([a-z]+)\d+$", r"^(.+)-part\d+$"):
            match = re.match(pattern, name)
            if match and (match[1] in self.block_queue or match[1] in self.block_devices):
                return match[1]
        return None

    def disk_attribute(self, leaf: str, attribute: str) -> str | None:
        """A queue attribute (physical_block_size, logical_block_size, rotational) of the leaf's disk."""
        disk = self.disk_of(leaf)
        if disk is None:
            return None
        value = self.block_queue.get(disk, {}).get(attribute)
        if value is None and disk in self.block_devices:
            device = self.block_devices[disk]
            value = {"physical_block_size": device.physical_sector, "logical_block_size": device.logical_sector,
                     "rotational": None if device.rotational is None else int(device.rotational)}.get(attribute)
        return None if value is None else str(value)

    def rotational(self, leaf: str) -> bool | None:
        value = self.disk_attribute(leaf, "rotational")
        return None if value is None else value == "1"

    def physical_sector(self, leaf: str) -> int | None:
        value = self.disk_attribute(leaf, "physical_block_size")
        return int(value) if value and value.isdigit() else None

    @property
    def is_vm(self) -> bool:
        """A virtual machine (not a container: systemd-detect-virt also names lxc, docker, podman, ...)."""
        return "hypervisor" in self.cpu_flags or (self.virt is not None and self.virt not in ("none", *CONTAINERS))

    # --- VMs -------------------------------------------------------------------------------------------
    def vm_disks(self) -> Iterator[tuple[Vm, VmDisk, DiskLocation | None]]:
        """Every VM disk with where it lives (the dataset for zvols and image files on ZFS, when known)."""
        for vm in self.vms:
            for disk in vm.disks:
                location = locate_volume(disk.volume, self.storages) if vm.kind == "proxmox" or disk.volume.startswith("/") \
                    else None
                if location is not None and location.dataset is None and location.path:
                    location = DiskLocation(self.dataset_of_path(location.path), location.path, False,
                                            location.sparse_storage, location.assumed)
                yield vm, disk, location


def _read(directory: Path, name: str) -> str | None:
    path = directory / name
    return path.read_text(errors="replace") if path.is_file() else None


def _parse(facts: Facts, directory: Path, name: str, parser: Callable[[str], T]) -> T | None:
    """Parse one file; a format error becomes a recorded problem and the fact stays unknown."""
    text = _read(directory, name)
    if text is None or not text.strip():
        return None
    try:
        return parser(text, name) if "file" in inspect.signature(parser).parameters else parser(text)
    except FactsFormatError as error:
        facts.problems.append(str(error))
        return None
    except (ValueError, KeyError, IndexError, AttributeError, TypeError, RecursionError) as error:
        facts.problems.append(f"{name}: unreadable ({type(error).__name__}: {error})")
        return None


def _leaf_keys(facts: Facts, leaf: str) -> tuple[str, str | None]:
    return facts.kernel_name(leaf), facts.disk_of(leaf)


def _assign_ashift(facts: Facts, zdb: dict[str, list[zfs.ZdbTopVdev]]) -> None:
    """Match zdb's top-level vdevs (vdev id order) to zpool status vdevs by their leaves' devices."""
    for pool, vdevs in facts.vdevs.items():
        tops = [t for t in zdb.get(pool, []) if t.type != "hole"]
        top_keys = [{_leaf_keys(facts, path) for path in top.paths} for top in tops]
        top_names = [{name for name, _ in keys} for keys in top_keys]
        top_disks = [{disk for _, disk in keys} for keys in top_keys]
        candidates = [v for v in vdevs if v.vdev_class not in ("cache", "spares")]
        for vdev in candidates:
            keys = [_leaf_keys(facts, leaf) for leaf in vdev.leaves]
            best, best_score = None, 0
            for top, names, disks_of_top in zip(tops, top_names, top_disks):
                exact = sum(1 for name, _ in keys if name in names)
                disks = sum(1 for _, disk in keys if disk and disk in disks_of_top)
                score = exact * 10 + disks
                if score > best_score:
                    best, best_score = top, score
            if best is None and len(tops) == len(candidates):
                best = tops[candidates.index(vdev)]  # no device names to match: creation order
            if best is not None and best.ashift is not None:
                vdev.ashift, vdev.ashift_source = best.ashift, "zdb -C"
    for pool, props in facts.vdev_properties.items():
        for vdev in facts.vdevs.get(pool, []):
            if vdev.ashift is not None:
                continue
            # rows are named mirror-0, or by the leaf's disk (sda) where zpool status -P says /dev/sda1
            for name in (vdev.name, vdev.name.rsplit("/", 1)[-1], facts.disk_of(vdev.name)):
                value = props.get(name or "", {}).get("ashift", "")
                if value.isdigit() and int(value) > 0:
                    vdev.ashift, vdev.ashift_source = int(value), "zpool get ashift all-vdevs"
                    break


def load_facts(directory: Path, vm_configs: list[Path] | None = None, storage_cfg: Path | None = None) -> Facts:
    """Read a facts directory (and extra VM config files) into `Facts`."""
    facts = Facts()
    version_text = _read(directory, "zfs-version.txt") or _read(directory, "zfs-module-version.txt")
    if version_text and version_text.strip():
        facts.zfs_version = next((l for l in version_text.splitlines() if l.startswith("zfs-kmod-")),
                                 version_text.strip().splitlines()[0])
        facts.version = parse_zfs_version(version_text)
    facts.pools = _parse(facts, directory, "zpool-get-Hp-all.txt", zfs.parse_zpool_get) or {}
    facts.datasets = _parse(facts, directory, "zfs-get-Hp-all.txt", zfs.parse_zfs_get) or {}
    facts.vdevs = (_parse(facts, directory, "zpool-status-j.txt", zfs.parse_zpool_status_json)
                   or _parse(facts, directory, "zpool-status.txt", zfs.parse_zpool_status) or {})
    facts.vdev_properties = _parse(facts, directory, "zpool-get-vdevs.txt", zfs.parse_vdev_properties) or {}
    sizes = _parse(facts, directory, "zpool-list-Hpv.txt", zfs.parse_zpool_list)
    if sizes:
        facts.pool_sizes, facts.class_space = sizes
    facts.arcstats = _parse(facts, directory, "arcstats.txt", zfs.parse_kstat) or {}
    facts.module_parameters = _parse(facts, directory, "zfs-module-parameters.txt", zfs.parse_module_parameters) or {}
    facts.block_queue = _parse(facts, directory, "sys-block-queue.txt", host.parse_block_queue) or {}
    facts.block_devices = (_parse(facts, directory, "lsblk.json", host.parse_lsblk)
                           or _parse(facts, directory, "lsblk-J-O.txt", host.parse_lsblk) or {})
    facts.links = _parse(facts, directory, "dev-disk-links.txt", host.parse_links) or {}
    facts.nvme_formats = _parse(facts, directory, "nvme-id-ns.txt", host.parse_nvme_id_ns) or {}
    facts.mounts = _parse(facts, directory, "mounts.txt", host.parse_mounts) or []
    facts.swaps = _parse(facts, directory, "swaps.txt", host.parse_swaps)
    nodes = _read(directory, "numa-nodes.txt")
    facts.numa_nodes = len([l for l in nodes.splitlines() if "/node" in l]) if nodes else None
    facts.meminfo = _parse(facts, directory, "meminfo.txt", host.parse_meminfo) or {}
    facts.cmdline = (_read(directory, "cmdline.txt") or "").strip() or None
    config = _read(directory, "kernel-config.txt") or ""
    facts.kernel_config = dict(m.groups() for m in re.finditer(r"(CONFIG_\w+)=(\S+)", config))
    auto_init = _read(directory, "dmesg-mem-auto-init.txt")
    facts.mem_auto_init = auto_init.strip().splitlines()[-1] if auto_init and auto_init.strip() else None
    facts.cpu_flags = _parse(facts, directory, "cpuinfo.txt", host.parse_cpu_flags) or set()
    facts.virt = (_read(directory, "virt.txt") or "").strip() or None
    zdb = _parse(facts, directory, "zdb-C.txt", zfs.parse_zdb_config) or {}
    _assign_ashift(facts, zdb)
    storage_text = storage_cfg.read_text(errors="replace") if storage_cfg else _read(directory, "pve/storage.cfg")
    if storage_text is not None:
        try:
            facts.storages = parse_storage_cfg(storage_text, str(storage_cfg or "pve/storage.cfg"))
        except FactsFormatError as error:
            facts.problems.append(str(error))
    files = sorted((directory / "qemu-server").glob("*.conf")) + sorted((directory / "libvirt").glob("*.xml"))
    for path in files + list(vm_configs or []):
        name = f"{path.parent.name}/{path.name}"
        try:
            text = path.read_text(errors="replace")
            is_xml = path.suffix == ".xml" or text.lstrip().startswith("<")
            facts.vms.append(parse_libvirt_xml(text, name) if is_xml else parse_qm_conf(text, name))
        except FactsFormatError as error:
            facts.problems.append(str(error))
    images = _read(directory, "image-files.txt")
    if images is not None:
        facts.image_files = {}
        for line in images.splitlines():
            size, _, path = line.partition("\t")
            if size.isdigit() and path:
                facts.image_files[path] = int(size)
    return facts
