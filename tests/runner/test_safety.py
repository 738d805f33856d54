"""Target safety with real loop devices, real file systems and real tmpfs mounts.

These need root (losetup, mount). Nothing here is faked: each device really carries the signature the
test names, made by the real tool (mkfs.ext4, sfdisk, mkswap, pvcreate).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from stackbench.base.errors import UnsafeTarget
from stackbench.probe.block import collect_target_facts
from stackbench.measure.safety import cache_warning, resolve_target

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mounts")
MiB = 1024**2






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
def test_too_little_free_space_is_refused_with_both_numbers(tmpfs_mount) -> None:
    small_tmpfs = tmpfs_mount("8M")
    with pytest.raises(UnsafeTarget) as caught:
        resolve_target(small_tmpfs, size=64 * MiB, destroy_data=False, run_id="abc")
    message = caught.value.one_line()
    assert "only 8.0 MiB free" in message and "64.0 MiB" in message and "smaller --size" in message
    assert os.listdir(small_tmpfs) == []


@root_only
def test_a_blank_block_device_needs_destroy_data(blank_loop: Path) -> None:
    with pytest.raises(UnsafeTarget, match="--destroy-data"):
        resolve_target(blank_loop, size=MiB, destroy_data=False, run_id="abc")
    target = resolve_target(blank_loop, size=MiB, destroy_data=True, run_id="abc")
    assert (target.kind, target.remove_after, target.capacity_bytes) == ("device", False, 64 * MiB)


@root_only
def test_a_size_beyond_the_device_is_refused(blank_loop: Path) -> None:
    with pytest.raises(UnsafeTarget, match="larger than"):
        resolve_target(blank_loop, size=128 * MiB, destroy_data=True, run_id="abc")


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
def test_devices_holding_data_are_refused_even_with_destroy_data(blank_loop: Path, prepare, expected: str) -> None:
    prepare(blank_loop)
    before = blank_loop.read_bytes()[: 4 * MiB]
    with pytest.raises(UnsafeTarget) as caught:
        resolve_target(blank_loop, size=MiB, destroy_data=True, run_id="abc")
    assert expected in caught.value.one_line()
    assert str(blank_loop) in caught.value.one_line()
    assert blank_loop.read_bytes()[: 4 * MiB] == before


@root_only
def test_a_mounted_device_is_refused(blank_loop: Path, tmp_path: Path) -> None:
    _make("mkfs.ext4", "-q", "-F", str(blank_loop))
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    subprocess.run(["mount", str(blank_loop), str(mount_point)], check=True)
    try:
        with pytest.raises(UnsafeTarget, match="ext4 file system"):
            resolve_target(blank_loop, size=MiB, destroy_data=True, run_id="abc")
        facts = collect_target_facts(mount_point)
        assert facts["fs_type"] == "ext4"
        assert facts["block_devices"][0]["name"] == blank_loop.name
        assert facts["block_devices"][0]["logical_sector_size"] == 512
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


@root_only
def test_active_swap_is_refused(blank_loop: Path) -> None:
    _make("mkswap", str(blank_loop))
    subprocess.run(["swapon", str(blank_loop)], check=False, capture_output=True)
    with pytest.raises(UnsafeTarget, match="swap"):
        resolve_target(blank_loop, size=MiB, destroy_data=True, run_id="abc")


@root_only
def test_a_device_with_partitions_is_refused(blank_loop: Path) -> None:
    subprocess.run(["sfdisk", "-q", str(blank_loop)], input=b"label: dos\n,\n", check=True, capture_output=True)
    with pytest.raises(UnsafeTarget, match="partition table|partitions"):
        resolve_target(blank_loop, size=MiB, destroy_data=True, run_id="abc")


@root_only
def test_tmpfs_facts_have_no_block_device(tmpfs_mount) -> None:
    small_tmpfs = tmpfs_mount("8M")
    facts = collect_target_facts(small_tmpfs)
    assert facts["fs_type"] == "tmpfs"
    assert facts["block_devices"] == []


def test_cache_warning_only_for_reads_below_twice_ram() -> None:
    system = {"ram_bytes": 8 * 1024**3}
    assert cache_warning(system, 1024**3, True, "ext4") is not None
    assert "2x RAM" in str(cache_warning(system, 1024**3, True, "ext4"))
    assert cache_warning(system, 1024**3, False, "ext4") is None
    assert cache_warning(system, 16 * 1024**3, True, "ext4") is None
    assert "ARC" in str(cache_warning(system, 1024**3, True, "zfs"))
    assert "tmpfs" in str(cache_warning(system, 64 * 1024**3, True, "tmpfs"))
