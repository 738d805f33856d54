"""A loop device shows a range of its backing file; another loop device over an overlapping range of the
same file shows the same bytes. A second loop device at an offset into a mounted image looked blank to
every check of the device itself, and fio on it corrupted the mounted ext4. Real loop devices over a file
in tmp_path, a real ext4 made by mkfs.ext4 and mounted; all unmounted and detached afterwards."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from conftest import MiB, _need_root, cli_here
from mounts import detach, unmount
from stackbench.base.errors import UnsafeTarget
from stackbench.measure.safety import resolve_target


class Image:
    """A 64 MiB image file, the loop devices attached over it and the mounts made of them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "wb") as handle:
            handle.truncate(64 * MiB)
        self.devices: list[Path] = []
        self.mounts: list[Path] = []

    def attach(self, backing: Path | None = None, *, offset: int = 0, sizelimit: int = 0) -> Path:
        argv = ["losetup", "-f", "--show", "-o", str(offset)] + (["--sizelimit", str(sizelimit)] if sizelimit else [])
        done = subprocess.run([*argv, str(backing or self.path)], capture_output=True, text=True, check=True)
        self.devices.append(Path(done.stdout.strip()))
        return self.devices[-1]

    def mount_ext4(self, device: Path) -> Path:
        subprocess.run(["mkfs.ext4", "-q", "-F", str(device)], check=True, capture_output=True)
        point = self.path.parent / f"mnt-{device.name}"
        point.mkdir()
        subprocess.run(["mount", str(device), str(point)], check=True)
        self.mounts.append(point)
        return point

    def digest(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def close(self) -> None:
        """Unmount and detach, top down, each step tried whatever the ones before it raised, and wait until the
        kernel has let go of every device over the image (tests/mounts.py)."""
        with contextlib.ExitStack() as undo:
            undo.callback(detach, self.path)
            for device in self.devices:
                undo.callback(subprocess.run, ["losetup", "-d", str(device)], capture_output=True)
            for point in self.mounts:
                undo.callback(unmount, point)


@pytest.fixture
def image(tmp_path: Path) -> Iterator[Image]:
    _need_root()
    made = Image(tmp_path / "disk.img")
    try:
        yield made
    finally:
        made.close()


def _refused(device: Path) -> str:
    with pytest.raises(UnsafeTarget) as caught:
        resolve_target(device, size=MiB, destroy_data=True, run_id="abc")
    return caught.value.one_line()


def test_a_second_loop_device_at_an_offset_into_a_mounted_image_is_refused(image: Image, tmp_path: Path) -> None:
    first = image.attach()
    point = image.mount_ext4(first)
    second = image.attach(offset=MiB)
    line = _refused(second)
    assert f"{second} shows part of {image.path} (63.0 MiB from byte {MiB}), overlapping {first}, which is mounted " \
           f"at {point}" in line, line
    before = image.digest()
    run = cli_here("run", "-t", str(second), "--destroy-data", "--bs", "4k", "--rw", "randwrite", "--runtime", "1",
                   "--size", "4M", "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert run.returncode == 1 and run.stderr.startswith("Error: ") and len(run.stderr.splitlines()) == 1
    assert image.digest() == before


def test_a_loop_device_over_bytes_no_mounted_device_shows_is_accepted(image: Image) -> None:
    """Overlap is of byte ranges, not of files: the second half of the image is nobody's."""
    first = image.attach(sizelimit=32 * MiB)
    image.mount_ext4(first)
    second = image.attach(offset=32 * MiB)
    assert resolve_target(second, size=MiB, destroy_data=True, run_id="abc").fio_filename == str(second)
    overlapping = image.attach(offset=31 * MiB)
    assert "overlapping" in _refused(overlapping)


def test_overlapping_a_loop_device_nothing_uses_is_allowed(image: Image) -> None:
    image.attach()
    second = image.attach(offset=MiB)
    assert resolve_target(second, size=MiB, destroy_data=True, run_id="abc").kind == "device"


def test_an_image_that_backs_a_mounted_loop_device_is_refused_as_a_file_target(image: Image) -> None:
    first = image.attach()
    point = image.mount_ext4(first)
    line = _refused(image.path)
    assert f"{image.path} is the backing file of {first}, which is mounted at {point}" in line, line


def test_a_loop_device_whose_backing_file_a_process_has_open_is_refused(image: Image) -> None:
    """A VM's disk image: qemu holds the file open, no mount says so."""
    device = image.attach()
    holder = subprocess.Popen(["sh", "-c", f"exec 3<>{image.path}; echo; exec sleep 30"], stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()
        line = _refused(device)
        assert f"process {holder.pid} (sleep) has that file open" in line, line
        with pytest.raises(UnsafeTarget, match=f"is open in process {holder.pid}"):
            resolve_target(image.path, size=MiB, destroy_data=True, run_id="abc")
    finally:
        holder.kill()
        holder.wait()


def test_a_loop_device_over_a_mounted_block_device_is_refused(image: Image) -> None:
    under = image.attach()
    point = image.mount_ext4(under)
    over = image.attach(under, offset=MiB)
    line = _refused(over)
    assert f"and {under} is mounted at {point}" in line, line
