"""The cgroup I/O throttles that hold this process's requests to a block device (docs/stack.md).

A blkio throttle (cgroup v1's blkio.throttle.*_device, v2's io.max) holds a bio before the device's queue
takes it: the time a throttled request waits is in no counter of the throttled device, whose
/proc/diskstats row counts only what was let through. Measured with 100 IOPS on the lower of two loop
devices (docs/stack.md, "A throttled layer", two runs): the loop device above waited, 99.7-99.9 %
utilised with an await of 40.5-40.7 ms, while the throttled one showed 1.4-4.6 % and 0.85-1.6 ms. So the
layer table cannot see a throttle in the counters; it reads the limits instead. They apply to the processes
of the cgroup they are set in and of the groups under it, so this process's group and its ancestors count:
a run's fio inherits stackbench's group.
"""

from __future__ import annotations

from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
# cgroup v1's throttle files and what each limits
V1_FILES = (("blkio.throttle.read_iops_device", "read", "IOPS"), ("blkio.throttle.write_iops_device", "write", "IOPS"),
            ("blkio.throttle.read_bps_device", "read", "B/s"), ("blkio.throttle.write_bps_device", "write", "B/s"))
# cgroup v2's io.max keys and what each limits
V2_KEYS = {"riops": ("read", "IOPS"), "wiops": ("write", "IOPS"), "rbps": ("read", "B/s"), "wbps": ("write", "B/s")}


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def own_groups(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> list[tuple[int, str, Path]]:
    """The directories of this process's blkio group (cgroup v1) and of its unified group (v2), each
    followed by its ancestors up to the hierarchy's root, as (the version, the group's name, its directory)."""
    found: list[tuple[int, str, Path]] = []
    for line in (_read(proc_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[2].startswith("/"):
            continue
        if "blkio" in parts[1].split(","):
            version, base = 1, root / "blkio"
        elif parts[0] == "0" and not parts[1]:
            version, base = 2, root if (root / "cgroup.controllers").exists() else root / "unified"
        else:
            continue
        group = parts[2].rstrip("/")
        while True:
            found.append((version, group or "/", base / group.lstrip("/")))
            if not group:
                break
            group = group.rsplit("/", 1)[0]
    return found


def _limits_v1(directory: Path, number: str) -> list[tuple[str, str, int]]:
    found = []
    for file, direction, unit in V1_FILES:
        for line in (_read(directory / file) or "").splitlines():
            fields = line.split()
            if len(fields) == 2 and fields[0] == number and fields[1].isdigit() and int(fields[1]) > 0:
                found.append((direction, unit, int(fields[1])))
    return found


def _limits_v2(directory: Path, number: str) -> list[tuple[str, str, int]]:
    found = []
    for line in (_read(directory / "io.max") or "").splitlines():
        fields = line.split()
        if not fields or fields[0] != number:
            continue
        for field in fields[1:]:
            key, _, value = field.partition("=")
            if key in V2_KEYS and value.isdigit():
                found.append((*V2_KEYS[key], int(value)))
    return found


def _limit_text(direction: str, unit: str, value: int) -> str:
    return f"{direction} {value:,} IOPS" if unit == "IOPS" else f"{direction} {value / 1e6:g} MB/s"


def device_throttle(number: str, proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> str | None:
    """The throttles on the block device `number` (MAJ:MIN) that hold this process's requests, as one line
    (`read 200 IOPS, write 200 IOPS (cgroup /bench)`), None where there is none."""
    parts = []
    for version, group, directory in own_groups(proc_cgroup, root):
        limits = _limits_v1(directory, number) if version == 1 else _limits_v2(directory, number)
        if limits:
            parts.append(", ".join(_limit_text(*limit) for limit in limits) + f" (cgroup {group})")
    return "; ".join(parts) or None
