"""Facts for the audit: a directory of raw probe outputs (`stackbench.audit.probe`), read into one model.

Rules read `Facts` only, never the live system, so every rule can be tested from saved facts and another
machine's facts can be audited anywhere. A missing file means the fact is unknown; a file in a format this
version does not know is recorded in `Facts.problems` (file and line) and treated as unknown, so one odd
file neither stops the audit nor is read half-way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from stackbench.audit import host_outputs as host
from stackbench.audit.aes_ni import AesNi, parse_aes_ni
from stackbench.audit import zfs_outputs as zfs
from stackbench.audit.errors import FactsFormatError
from stackbench.audit.versions import Version, parse_zfs_version
from stackbench.audit.storage import DiskLocation, Storage, is_network_file_system, locate_volume, parse_storage_cfg
from stackbench.audit.vm import Vm, VmDisk, parse_libvirt_xml, parse_qm_conf
from stackbench.audit.zfs_outputs import Vdev
from stackbench.base.inputs import FACTS_FILE, STORAGE_CFG, VM_CONFIG, read_input_text, read_optional_text

__all__ = ["FACT_FILES", "ZDB_CONFIG", "FactFile", "Facts", "Vdev", "assign_ashift", "load_facts"]
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
    mount_options: dict[str, tuple[str, str, tuple[str, ...]]] = field(default_factory=dict)  # point -> (source, type, options)
    swaps: list[str] | None = None
    numa_nodes: int | None = None
    meminfo: dict[str, int] = field(default_factory=dict)  # bytes
    cmdline: str | None = None
    kernel_config: dict[str, str] = field(default_factory=dict)
    mem_auto_init: str | None = None  # the kernel's "mem auto-init: ..." line
    cpu_flags: set[str] = field(default_factory=set)  # the first processor's
    aes_ni: AesNi | None = None  # from every processor's flags; None when there is no cpuinfo
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

    def mount_of_path(self, path: str) -> tuple[str, str, str] | None:
        """The mount (source, mount point, fs type) whose mount point is the longest prefix of `path`, from
        mounts.txt; None when the facts have no mounts."""
        best: tuple[str, str, str] | None = None
        for source, point, fstype in self.mounts:
            if _under(path, point) and (best is None or len(point) >= len(best[1])):
                best = (source, point, fstype)  # the later of two equal mount points is the one on top
        return best

    def dataset_of_path(self, path: str) -> str | None:
        """The ZFS file system `path` lies on: the mount it lies on when mounts.txt is in the facts (a file system
        of any type mounted deeper hides the dataset), else the dataset whose mount point is its longest prefix."""
        if self.mounts:
            mount = self.mount_of_path(path)
            return mount[0] if mount and mount[2] in ("zfs", "fuse.zfs") else None
        best, best_len = None, -1
        for dataset in self.filesystems():
            point = self.dataset_prop(dataset, "mountpoint") or ""
            if point.startswith("/") and _under(path, point) and len(point) > best_len:
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
    def vm_disks(self) -> Iterator[tuple[Vm, VmDisk, DiskLocation]]:
        """Every VM disk with where it lives: its kind of backing (audit.storage.KINDS) and, for zvols and image
        files on ZFS, the dataset."""
        for vm in self.vms:
            for disk in vm.disks:
                yield vm, disk, self.locate(vm, disk)

    def locate(self, vm: Vm, disk: VmDisk) -> DiskLocation:
        """Where one VM disk lives: its config and storage.cfg say which storage or path, the host's facts say
        which file system a path lies on and which zvol a /dev/zdN is. A libvirt disk is located by its source
        type first: only file, block and dir sources are host paths (an NFS export QEMU opens through libnfs,
        an NBD socket, a PCI NVMe device or a vhost-user socket is no file under /)."""
        if vm.kind == "libvirt":
            located = _libvirt_location(disk)
            if located is not None:
                return located
        location = locate_volume(disk.volume, self.storages)
        if location.kind == "block" and location.storage is None:
            return self._zvol_device(location)
        if location.kind == "file" and location.path:  # a storage of type btrfs or nfs says its file system itself
            return self._on_file_system(location)
        return location

    def _zvol_device(self, location: DiskLocation) -> DiskLocation:
        """A /dev path that is a zvol under another name (/dev/zd16, a link to it) is the zvol the links name."""
        device = location.where.rsplit(" ", 1)[-1]
        target = self.links.get(device, device)
        names = [link for link, to in self.links.items() if to == target and link.startswith("/dev/zvol/")]
        if names:
            name = names[0][len("/dev/zvol/"):]
            return DiskLocation("zvol", f"zvol {name} ({device}, dev-disk-links.txt)", dataset=name)
        if re.fullmatch(r"/dev/zd\d+(p\d+)?", target):
            return DiskLocation("zvol", f"zvol device {device} (its name is not in the facts)")
        return location

    def _on_file_system(self, location: DiskLocation) -> DiskLocation:
        """An image file's location with the file system under it: a ZFS dataset, btrfs, a network file system."""
        path = location.path or ""
        dataset = self.dataset_of_path(path)
        mount = self.mount_of_path(path)
        if dataset:
            how = "mounts.txt" if self.mounts else "by the datasets' mount points; mounts.txt not in the facts"
            return replace(location, kind="zfs-file", dataset=dataset,
                           where=f"{location.where}, on ZFS file system {dataset} ({how})")
        if mount is None:
            return replace(location, where=f"{location.where}, on a file system the facts do not name")
        fstype = mount[2]
        kind = ("btrfs-file" if fstype == "btrfs" else "netfs-file" if is_network_file_system(fstype)
                else location.kind)
        return replace(location, kind=kind, where=f"{location.where}, on {fstype} {mount[1]} (mounts.txt)")


def _libvirt_location(disk: VmDisk) -> DiskLocation | None:
    """A libvirt disk that is not a host path, by its source type; None for a path (file, block), which the
    host's facts resolve."""
    kind = disk.source_type or "file"
    if kind == "network":
        if disk.protocol == "rbd":
            return DiskLocation("librbd", f"network disk rbd {disk.volume} (QEMU's librbd)")
        driver = {"nfs": "libnfs", "iscsi": "libiscsi", "gluster": "libgfapi", "nbd": "NBD client"}.get(
            disk.protocol or "", "own driver")
        return DiskLocation("network", f"network disk {disk.protocol or '(no protocol)'} {disk.volume} (QEMU's "
                                       f"{driver}; not a host file)")
    if kind == "volume":
        return DiskLocation("unknown", f"volume {disk.volume} of a libvirt storage pool, whose type is not in the "
                                       "facts")
    if kind == "nvme":
        return DiskLocation("pci", f"{disk.volume} (disk type nvme: QEMU's userspace NVMe driver)")
    if kind in ("vhostuser", "vhostvdpa"):
        return DiskLocation("vhost", f"{kind} {disk.volume} (the I/O is done outside QEMU)")
    if kind == "dir":
        return DiskLocation("directory", f"directory {disk.volume} (disk type dir: QEMU's vvfat)")
    if kind not in ("file", "block"):
        return DiskLocation("unknown", f"disk type {kind}, which this audit does not know")
    if not disk.volume.startswith("/"):
        return DiskLocation("unknown", "no source path in the domain")
    if kind == "block" and not disk.volume.startswith("/dev/"):  # a device node elsewhere is still no file
        return DiskLocation("block", f"host block device {disk.volume}")
    return None


def _under(path: str, point: str) -> bool:
    return path == point or path.startswith(point.rstrip("/") + "/")


def _read(directory: Path, name: str) -> str | None:
    """A saved file's text, None when the directory lacks it (a fact the capture does not have)."""
    return read_optional_text(directory / name, FACTS_FILE)


def _zfs_version(text: str) -> tuple[str, Version | None]:
    """(the line as printed, preferring the kernel module's, the parsed version): the module runs the pools."""
    line = next((l for l in text.splitlines() if l.startswith("zfs-kmod-")), text.strip().splitlines()[0])
    return line, parse_zfs_version(text)


def _numa_nodes(text: str) -> int:
    return len([l for l in text.splitlines() if "/node" in l])


def _kernel_config(text: str) -> dict[str, str]:
    return dict(m.groups() for m in re.finditer(r"(CONFIG_\w+)=(\S+)", text))


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def _stripped(text: str) -> str:
    return text.strip()


def _image_files(text: str) -> dict[str, int]:
    """`SIZE<TAB>PATH` lines from the probe's find; an empty file is a fact: no image files on ZFS."""
    files = {}
    for line in text.splitlines():
        size, _, path = line.partition("\t")
        if size.isdigit() and path:
            files[path] = int(size)
    return files


@dataclass(frozen=True)
class FactFile:
    """One saved file the loader reads: which `Facts` fields it fills and with which parser.

    A parser that fills several fields returns a tuple in `fields` order. `fallback` rows are an older or
    alternative capture of the same fact and are read only when the rows before left the field empty.
    """

    file: str
    fields: tuple[str, ...]
    parser: Callable[..., Any]
    takes_file_name: bool = False  # the parser names the file in its FactsFormatError
    fallback: bool = False
    empty_is_known: bool = False  # an empty file is a fact (nothing found), not an unknown


FACT_FILES: tuple[FactFile, ...] = (
    FactFile("zfs-version.txt", ("zfs_version", "version"), _zfs_version),
    FactFile("zfs-module-version.txt", ("zfs_version", "version"), _zfs_version, fallback=True),  # before 0.8
    FactFile("zpool-get-Hp-all.txt", ("pools",), zfs.parse_zpool_get, takes_file_name=True),
    FactFile("zfs-get-Hp-all.txt", ("datasets",), zfs.parse_zfs_get, takes_file_name=True),
    FactFile("zpool-status-j.txt", ("vdevs",), zfs.parse_zpool_status_json, takes_file_name=True),  # 2.3+
    FactFile("zpool-status.txt", ("vdevs",), zfs.parse_zpool_status, takes_file_name=True, fallback=True),
    FactFile("zpool-get-vdevs.txt", ("vdev_properties",), zfs.parse_vdev_properties, takes_file_name=True),
    FactFile("zpool-list-Hpv.txt", ("pool_sizes", "class_space"), zfs.parse_zpool_list, takes_file_name=True),
    FactFile("arcstats.txt", ("arcstats",), zfs.parse_kstat, takes_file_name=True),
    FactFile("zfs-module-parameters.txt", ("module_parameters",), zfs.parse_module_parameters),
    FactFile("sys-block-queue.txt", ("block_queue",), host.parse_block_queue, takes_file_name=True),
    FactFile("lsblk.json", ("block_devices",), host.parse_lsblk, takes_file_name=True),
    FactFile("lsblk-J-O.txt", ("block_devices",), host.parse_lsblk, takes_file_name=True, fallback=True),  # older probes
    FactFile("dev-disk-links.txt", ("links",), host.parse_links, takes_file_name=True),
    FactFile("nvme-id-ns.txt", ("nvme_formats",), host.parse_nvme_id_ns, takes_file_name=True),
    FactFile("mounts.txt", ("mounts",), host.parse_mounts),
    FactFile("mounts.txt", ("mount_options",), host.parse_mount_options),
    FactFile("swaps.txt", ("swaps",), host.parse_swaps),
    FactFile("numa-nodes.txt", ("numa_nodes",), _numa_nodes),
    FactFile("meminfo.txt", ("meminfo",), host.parse_meminfo),
    FactFile("cmdline.txt", ("cmdline",), _stripped),
    FactFile("kernel-config.txt", ("kernel_config",), _kernel_config),
    FactFile("dmesg-mem-auto-init.txt", ("mem_auto_init",), _last_line),
    FactFile("cpuinfo.txt", ("cpu_flags",), host.parse_cpu_flags),
    FactFile("cpuinfo.txt", ("aes_ni",), parse_aes_ni),
    FactFile("virt.txt", ("virt",), _stripped),
    FactFile("image-files.txt", ("image_files",), _image_files, empty_is_known=True),
)
# zdb's top-level vdevs fill no field of their own: `load_facts` matches their ashift onto the status vdevs.
ZDB_CONFIG = FactFile("zdb-C.txt", (), zfs.parse_zdb_config, takes_file_name=True)


def _parse(facts: Facts, directory: Path, row: FactFile) -> Any:
    """Parse one file; a format error becomes a recorded problem and the fact stays unknown (None)."""
    text = _read(directory, row.file)
    if text is None or (not text.strip() and not row.empty_is_known):
        return None
    try:
        return row.parser(text, row.file) if row.takes_file_name else row.parser(text)
    except FactsFormatError as error:
        facts.problems.append(str(error))
        return None
    except (ValueError, KeyError, IndexError, AttributeError, TypeError, RecursionError) as error:
        facts.problems.append(f"{row.file}: unreadable ({type(error).__name__}: {error})")
        return None


def _fill(facts: Facts, directory: Path) -> None:
    """Every row of `FACT_FILES` in order; a field keeps its default (unknown) when no file says anything."""
    filled: set[str] = set()
    for row in FACT_FILES:
        if row.fallback and filled.issuperset(row.fields):
            continue
        value = _parse(facts, directory, row)
        if value is None:
            continue
        values = value if len(row.fields) > 1 else (value,)
        for name, part in zip(row.fields, values):
            setattr(facts, name, part)
        if any(values):
            filled.update(row.fields)


def _leaf_keys(facts: Facts, leaf: str) -> tuple[str, str | None]:
    return facts.kernel_name(leaf), facts.disk_of(leaf)


def assign_ashift(facts: Facts, zdb: dict[str, list[zfs.ZdbTopVdev]]) -> None:
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
    _fill(facts, directory)
    zdb = _parse(facts, directory, ZDB_CONFIG) or {}
    assign_ashift(facts, zdb)
    storage_text = read_input_text(storage_cfg, STORAGE_CFG) if storage_cfg else _read(directory, "pve/storage.cfg")
    if storage_text is not None:
        try:
            facts.storages = parse_storage_cfg(storage_text, str(storage_cfg or "pve/storage.cfg"))
        except FactsFormatError as error:
            facts.problems.append(str(error))
    files = sorted((directory / "qemu-server").glob("*.conf")) + sorted((directory / "libvirt").glob("*.xml"))
    for path in files + list(vm_configs or []):
        name = f"{path.absolute().parent.name}/{path.name}"  # --vm-config 100.conf in its directory too
        try:
            text = read_input_text(path, VM_CONFIG)
            is_xml = path.suffix == ".xml" or text.lstrip().startswith("<")
            facts.vms.append(parse_libvirt_xml(text, name) if is_xml else parse_qm_conf(text, name))
        except FactsFormatError as error:
            facts.problems.append(str(error))
    return facts
