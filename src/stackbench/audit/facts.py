"""Facts for the audit: raw outputs of the commands the probe runs, saved in a directory, parsed here.

Saving raw text (not parsed values) keeps the facts honest and lets a later parser re-read old captures.
File names are fixed (`FILES`); a missing file means the fact is unknown, never an error. Parsers follow the
formats in the knowledge base: `zpool get -Hp` / `zfs get -Hp` are tab-separated name/property/value/source;
the per-vdev ashift comes from `zdb -C` (the pool property `ashift` is only the hint for new vdevs);
vdev classes come from `zpool status` sections (`special`, `logs`, `cache`, `dedup`, `spares`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# file name -> the command that produces it on a live system
FILES: dict[str, list[str]] = {
    "zfs-version.txt": ["zfs", "version"],
    "zpool-get-Hp-all.txt": ["zpool", "get", "-Hp", "all"],
    "zpool-list-Hpv.txt": ["zpool", "list", "-Hp", "-v"],
    "zpool-status.txt": ["zpool", "status", "-v"],
    "zfs-get-Hp-all.txt": ["zfs", "get", "-Hp", "all"],
    "zdb-C.txt": ["zdb", "-C"],
    "arcstats.txt": ["cat", "/proc/spl/kstat/zfs/arcstats"],
    "zfs-module-parameters.txt": ["sh", "-c", "cd /sys/module/zfs/parameters && grep -H . *"],
    "sys-block-queue.txt": [
        "sh", "-c",
        'for d in /sys/block/*; do for f in physical_block_size logical_block_size rotational scheduler; do '
        'printf "%s/queue/%s\\t%s\\n" "$d" "$f" "$(cat $d/queue/$f 2>/dev/null)"; done; done',
    ],
    "lsblk-J-O.txt": ["lsblk", "-J", "-O"],
    "cpuinfo.txt": ["cat", "/proc/cpuinfo"],
    "meminfo.txt": ["cat", "/proc/meminfo"],
    "cmdline.txt": ["cat", "/proc/cmdline"],
}
CLASSES = ("special", "logs", "cache", "dedup", "spares")


@dataclass
class Vdev:
    name: str
    type: str  # mirror, raidz1, disk, ...
    vdev_class: str  # normal, special, logs, cache, dedup, spares
    leaves: list[str] = field(default_factory=list)
    ashift: int | None = None


@dataclass
class Facts:
    zfs_version: str | None = None
    pools: dict[str, dict[str, str]] = field(default_factory=dict)
    datasets: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # name -> prop -> (value, source)
    vdevs: dict[str, list[Vdev]] = field(default_factory=dict)  # pool -> top-level vdevs
    arcstats: dict[str, int] = field(default_factory=dict)
    module_parameters: dict[str, str] = field(default_factory=dict)
    block_queue: dict[str, dict[str, str]] = field(default_factory=dict)  # disk -> {physical_block_size: ...}
    meminfo: dict[str, int] = field(default_factory=dict)  # bytes
    cmdline: str | None = None
    cpu_flags: set[str] = field(default_factory=set)
    vm_configs: dict[str, dict[str, str]] = field(default_factory=dict)  # "qemu-server/100.conf" -> key -> value
    pool_sizes: dict[str, int] = field(default_factory=dict)  # zpool list: pool -> size in bytes
    class_space: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (pool, class) -> (size, alloc)

    def dataset_prop(self, dataset: str, prop: str) -> str | None:
        value = self.datasets.get(dataset, {}).get(prop)
        return value[0] if value else None

    def zvols(self) -> list[str]:
        return [name for name, props in self.datasets.items() if props.get("type", ("",))[0] == "volume"]

    def filesystems(self) -> list[str]:
        return [name for name, props in self.datasets.items() if props.get("type", ("",))[0] == "filesystem"]


def save_facts(directory: Path) -> dict[str, str]:
    """Run every probe command that exists here and save its raw output; returns file -> status."""
    directory.mkdir(parents=True, exist_ok=True)
    status = {}
    for name, command in FILES.items():
        if shutil.which(command[0]) is None:
            status[name] = f"skipped: {command[0]} not installed"
            continue
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            status[name] = f"failed: {error}"
            continue
        if done.returncode != 0 or not done.stdout.strip():
            status[name] = f"skipped: exit {done.returncode} {done.stderr.strip()[:80]}"
            continue
        (directory / name).write_text(done.stdout)
        status[name] = "saved"
    for conf in sorted(Path("/etc/pve/qemu-server").glob("*.conf")) if Path("/etc/pve").is_dir() else []:
        (directory / "qemu-server").mkdir(exist_ok=True)
        shutil.copy(conf, directory / "qemu-server" / conf.name)
        status[f"qemu-server/{conf.name}"] = "saved"
    return status


def _read(directory: Path, name: str) -> str | None:
    path = directory / name
    return path.read_text(errors="replace") if path.is_file() else None


def parse_zpool_get(text: str) -> dict[str, dict[str, str]]:
    pools: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3:
            pools.setdefault(parts[0], {})[parts[1]] = parts[2]
    return pools


def parse_zfs_get(text: str) -> dict[str, dict[str, tuple[str, str]]]:
    datasets: dict[str, dict[str, tuple[str, str]]] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 4:
            datasets.setdefault(parts[0], {})[parts[1]] = (parts[2], parts[3])
    return datasets


def parse_zpool_status(text: str) -> dict[str, list[Vdev]]:
    """Top-level vdevs per pool with their class, from the indentation of the config section."""
    pools: dict[str, list[Vdev]] = {}
    pool = None
    pool_depth = 0
    current_class = "normal"
    in_config = False
    for line in text.splitlines():
        if line.strip().startswith("pool:"):
            pool = line.split(":", 1)[1].strip()
            pools[pool] = []
            in_config = False
            continue
        if line.strip().startswith("NAME") and "STATE" in line:
            in_config = True
            pool_depth = -1
            continue
        if not in_config or pool is None:
            continue
        if not line.strip() or line.strip().startswith("errors:"):
            in_config = False
            continue
        body = line.lstrip("\t")
        depth = len(body) - len(body.lstrip(" "))
        name = body.split()[0]
        if pool_depth < 0:
            pool_depth = depth  # the pool's own row
            current_class = "normal"
            continue
        if depth == pool_depth and name in CLASSES:
            current_class = name
            continue
        if depth == pool_depth + 2:
            kind = re.sub(r"-\d+$", "", name) if re.match(r"^(mirror|raidz\d?|draid\S*)(-\d+)?$", name) else "disk"
            pools[pool].append(Vdev(name=name, type=kind, vdev_class=current_class, leaves=[] if kind != "disk" else [name]))
        elif depth > pool_depth + 2 and pools[pool]:
            pools[pool][-1].leaves.append(name)
    return pools


def parse_zdb_ashift(text: str) -> dict[str, list[int | None]]:
    """Per pool, the ashift of each top-level vdev in order (children[N] at the vdev_tree's first level)."""
    result: dict[str, list[int | None]] = {}
    pool = None
    top_indent = None
    for line in text.splitlines():
        if match := re.match(r"^\s+name: '(.+)'", line):
            if top_indent is None or pool is None:
                pool = match[1]
                result.setdefault(pool, [])
                top_indent = None
            continue
        if pool is None:
            continue
        if match := re.match(r"^(\s+)children\[(\d+)\]:", line):
            indent = len(match[1])
            if top_indent is None:
                top_indent = indent
            if indent == top_indent:
                result[pool].append(None)
            continue
        if (match := re.match(r"^(\s+)ashift: (\d+)", line)) and result[pool] and top_indent is not None:
            if len(match[1]) == top_indent + 4 and result[pool][-1] is None:
                result[pool][-1] = int(match[2])
        if line.strip() == "" and top_indent is not None:
            pool, top_indent = None, None
    return result


def parse_zpool_list(text: str) -> tuple[dict[str, int], dict[tuple[str, str], tuple[int, int]]]:
    """Pool sizes, and per allocation class the summed size and allocation of its rows with numbers.

    `zpool list -Hp -v` flattens the tree: pool rows start without a tab, vdev rows with one, and class
    headers (`special`, `logs`, `cache`, `dedup`, `spare`) are printed space-padded even under -H.
    """
    sizes: dict[str, int] = {}
    space: dict[tuple[str, str], tuple[int, int]] = {}
    pool, vclass = None, "normal"
    for line in text.splitlines():
        if not line.strip():
            continue
        first = line.split()[0]
        if not line.startswith("\t") and first in ("special", "logs", "cache", "dedup", "spare", "spares"):
            vclass = first
            continue
        fields = line.split("\t")
        if not line.startswith("\t"):
            pool, vclass = fields[0], "normal"
            if len(fields) > 1 and fields[1].isdigit():
                sizes[pool] = int(fields[1])
            continue
        if pool and vclass != "normal" and len(fields) > 3 and fields[2].isdigit() and fields[3].isdigit():
            size, alloc = space.get((pool, vclass), (0, 0))
            space[(pool, vclass)] = (size + int(fields[2]), alloc + int(fields[3]))
    return sizes, space


def parse_kstat(text: str) -> dict[str, int]:
    values = {}
    for line in text.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 3:
            try:
                values[parts[0]] = int(parts[2])
            except ValueError:
                continue
    return values


def parse_qm_conf(text: str) -> dict[str, str]:
    """Proxmox qemu-server config: `key: value` lines up to the first [snapshot] section."""
    config = {}
    for line in text.splitlines():
        if line.startswith("["):
            break
        if ":" in line and not line.startswith("#"):
            key, _, value = line.partition(":")
            config[key.strip()] = value.strip()
    return config


def load_facts(directory: Path, vm_configs: list[Path] | None = None) -> Facts:
    facts = Facts()
    if text := _read(directory, "zfs-version.txt"):
        facts.zfs_version = text.strip().splitlines()[0]
    if text := _read(directory, "zpool-get-Hp-all.txt"):
        facts.pools = parse_zpool_get(text)
    if text := _read(directory, "zfs-get-Hp-all.txt"):
        facts.datasets = parse_zfs_get(text)
    if text := _read(directory, "zpool-status.txt"):
        facts.vdevs = parse_zpool_status(text)
    if (text := _read(directory, "zdb-C.txt")) and facts.vdevs:
        for pool, ashifts in parse_zdb_ashift(text).items():
            normal_and_special = [v for v in facts.vdevs.get(pool, []) if v.vdev_class not in ("cache", "spares")]
            for vdev, ashift in zip(normal_and_special, ashifts):
                vdev.ashift = ashift
    if text := _read(directory, "zpool-list-Hpv.txt"):
        facts.pool_sizes, facts.class_space = parse_zpool_list(text)
    if text := _read(directory, "arcstats.txt"):
        facts.arcstats = parse_kstat(text)
    if text := _read(directory, "zfs-module-parameters.txt"):
        facts.module_parameters = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    if text := _read(directory, "sys-block-queue.txt"):
        for line in text.splitlines():
            path, _, value = line.partition("\t")
            match = re.match(r"/sys/block/([^/]+)/queue/(\w+)", path)
            if match:
                facts.block_queue.setdefault(match[1], {})[match[2]] = value.strip()
    if text := _read(directory, "meminfo.txt"):
        for line in text.splitlines():
            parts = line.replace(":", " ").split()
            if len(parts) >= 2 and parts[1].isdigit():
                facts.meminfo[parts[0]] = int(parts[1]) * (1024 if len(parts) > 2 and parts[2] == "kB" else 1)
    if text := _read(directory, "cmdline.txt"):
        facts.cmdline = text.strip()
    if text := _read(directory, "cpuinfo.txt"):
        flags = next((l.split(":", 1)[1] for l in text.splitlines() if l.startswith("flags")), "")
        facts.cpu_flags = set(flags.split())
    for path in sorted((directory / "qemu-server").glob("*.conf")) + list(vm_configs or []):
        facts.vm_configs[f"qemu-server/{path.name}"] = parse_qm_conf(path.read_text(errors="replace"))
    return facts
