"""Target safety with real loop devices, real file systems and real tmpfs mounts.

These need root (losetup, mount). Nothing here is faked: each device really carries the signature the
test names, made by the real tool (mkfs.ext4, sfdisk, mkswap, pvcreate).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from stackbench.errors import UnsafeTarget
from stackbench.probe.block import collect_target_facts
from stackbench.safety import cache_warning, resolve_target

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mounts")
MiB = 1024**2


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[Path]:
    """A fresh, blank 64 MiB loop device backed by a sparse file; detached afterwards even on failure."""
    backing = tmp_path / "backing.img"
    with open(backing, "wb") as handle:
        handle.truncate(64 * MiB)
    device = Path(subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True,
                                 check=True).stdout.strip())
    try:
        yield device
    finally:
        subprocess.run(["umount", str(device)], capture_output=True)
        subprocess.run(["swapoff", str(device)], capture_output=True)
        subprocess.run(["losetup", "-d", str(device)], capture_output=True)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8M", "tmpfs", str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def test_a_directory_gets_a_scratch_file_that_is_removed_after(tmp_path: Path) -> None:
    target = resolve_target(tmp_path, size=MiB, destroy_data=False, run_id="abc")
    assert target.kind == "directory"
    assert target.fio_filename == str(tmp_path / "stackbench-abc.scratch")
    assert target.remove_after


def test_a_new_file_path_is_created_and_removed(tmp_path: Path) -> None:
    target = resolve_target(tmp_path / "new.dat", size=MiB, destroy_data=False, run_id="abc")
    assert (target.kind, target.remove_after) == ("file", True)


def test_a_path_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsafeTarget, match="does not exist"):
        resolve_target(tmp_path / "no" / "file", size=MiB, destroy_data=False, run_id="abc")


def test_an_existing_file_needs_destroy_data_and_is_then_kept(tmp_path: Path) -> None:
    existing = tmp_path / "data.bin"
    existing.write_bytes(b"x" * 100)
    with pytest.raises(UnsafeTarget, match="--destroy-data"):
        resolve_target(existing, size=MiB, destroy_data=False, run_id="abc")
    target = resolve_target(existing, size=MiB, destroy_data=True, run_id="abc")
    assert (target.kind, target.remove_after) == ("file", False)


def test_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeTarget, match="not a directory"):
        resolve_target(fifo, size=MiB, destroy_data=True, run_id="abc")


@root_only
def test_too_little_free_space_is_refused_with_both_numbers(small_tmpfs: Path) -> None:
    with pytest.raises(UnsafeTarget) as caught:
        resolve_target(small_tmpfs, size=64 * MiB, destroy_data=False, run_id="abc")
    message = caught.value.one_line()
    assert "only 8.0 MiB free" in message and "64.0 MiB" in message and "smaller --size" in message
    assert os.listdir(small_tmpfs) == []


@root_only
def test_a_blank_block_device_needs_destroy_data(loop_device: Path) -> None:
    with pytest.raises(UnsafeTarget, match="--destroy-data"):
        resolve_target(loop_device, size=MiB, destroy_data=False, run_id="abc")
    target = resolve_target(loop_device, size=MiB, destroy_data=True, run_id="abc")
    assert (target.kind, target.remove_after, target.capacity_bytes) == ("device", False, 64 * MiB)


@root_only
def test_a_size_beyond_the_device_is_refused(loop_device: Path) -> None:
    with pytest.raises(UnsafeTarget, match="larger than"):
        resolve_target(loop_device, size=128 * MiB, destroy_data=True, run_id="abc")


def _make(tool: str, *args: str) -> None:
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is missing: scripts/test installs it")
    subprocess.run([tool, *args], check=True, capture_output=True, input=b"")


@root_only
@pytest.mark.parametrize("prepare, expected", [
    (lambda d: _make("mkfs.ext4", "-q", "-F", str(d)), "an ext4 file system (UUID"),
    (lambda d: _make("mkswap", str(d)), "a swap signature"),
    (lambda d: subprocess.run(["sfdisk", "-q", str(d)], input=b"label: gpt\n,\n", check=True, capture_output=True),
     "partition table"),
    (lambda d: _make("pvcreate", "-q", "-ff", "-y", str(d)), "an LVM physical volume"),
])
def test_devices_holding_data_are_refused_even_with_destroy_data(loop_device: Path, prepare, expected: str) -> None:
    prepare(loop_device)
    before = loop_device.read_bytes()[: 4 * MiB]
    with pytest.raises(UnsafeTarget) as caught:
        resolve_target(loop_device, size=MiB, destroy_data=True, run_id="abc")
    assert expected in caught.value.one_line()
    assert str(loop_device) in caught.value.one_line()
    assert loop_device.read_bytes()[: 4 * MiB] == before


@root_only
def test_a_mounted_device_is_refused(loop_device: Path, tmp_path: Path) -> None:
    _make("mkfs.ext4", "-q", "-F", str(loop_device))
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    subprocess.run(["mount", str(loop_device), str(mount_point)], check=True)
    try:
        with pytest.raises(UnsafeTarget, match="ext4 file system"):
            resolve_target(loop_device, size=MiB, destroy_data=True, run_id="abc")
        facts = collect_target_facts(mount_point)
        assert facts["fs_type"] == "ext4"
        assert facts["block_devices"][0]["name"] == loop_device.name
        assert facts["block_devices"][0]["logical_sector_size"] == 512
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


@root_only
def test_active_swap_is_refused(loop_device: Path) -> None:
    _make("mkswap", str(loop_device))
    subprocess.run(["swapon", str(loop_device)], check=False, capture_output=True)
    with pytest.raises(UnsafeTarget, match="swap"):
        resolve_target(loop_device, size=MiB, destroy_data=True, run_id="abc")


@root_only
def test_a_device_with_partitions_is_refused(loop_device: Path) -> None:
    subprocess.run(["sfdisk", "-q", str(loop_device)], input=b"label: dos\n,\n", check=True, capture_output=True)
    with pytest.raises(UnsafeTarget, match="partition table|partitions"):
        resolve_target(loop_device, size=MiB, destroy_data=True, run_id="abc")


@root_only
def test_tmpfs_facts_have_no_block_device(small_tmpfs: Path) -> None:
    facts = collect_target_facts(small_tmpfs)
    assert facts["fs_type"] == "tmpfs"
    assert facts["block_devices"] == []


def test_cache_warning_only_for_reads_below_twice_ram() -> None:
    system = {"ram_bytes": 8 * 1024**3}
    assert cache_warning(system, 1024**3, True, "ext4") is not None
    assert "2x RAM" in cache_warning(system, 1024**3, True, "ext4")
    assert cache_warning(system, 1024**3, False, "ext4") is None
    assert cache_warning(system, 16 * 1024**3, True, "ext4") is None
    assert "ARC" in cache_warning(system, 1024**3, True, "zfs")
    assert "tmpfs" in cache_warning(system, 64 * 1024**3, True, "tmpfs")
