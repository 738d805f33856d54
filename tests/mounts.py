"""Undoing what a root test mounted and attached, whatever state it was left in (tests/loop_chain.py).

Each undo is safe to register before the thing it undoes is made: it does nothing where there is nothing,
so a failure between two steps of a set-up (or an interruption between a command's success and the test
recording what it made) leaves nothing behind. Each waits for the kernel to let go rather than ignoring a
refusal: under load a loop device detached while udev still holds it open is only marked to clear itself
(LO_FLAGS_AUTOCLEAR) and keeps its backing file open for a while, so the file system under that file is
busy, and a test that ran `umount` once and ignored its answer leaked that mount and the loop device under
it. What is still held when the time is up is unmounted lazily (gone from every mount table) and named in
an error, so that a leak fails the test instead of passing unseen.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

PATIENCE_S = 15.0  # how long an undo waits for a busy mount or device to be let go (a loaded machine's udev)


def mounted(point: Path) -> bool:
    """Whether something is mounted at `point` (the kernel's mount table, /proc/self/mounts)."""
    return str(point) in mount_points()


def mount_points(source: Path | None = None) -> list[str]:
    """Every mount point of this mount namespace (of `source` alone, where given), decoded (the table writes
    a space as \\040)."""
    def decoded(field: str) -> str:
        return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)

    with open("/proc/self/mounts", encoding="utf-8", errors="surrogateescape") as table:
        rows = [[decoded(field) for field in line.split()[:2]] for line in table]
    return [point for mounted_from, point in rows if source is None or mounted_from == str(source)]


def _loop_backings() -> list[tuple[Path, str]]:
    """Every attached loop device with its backing file, as the kernel names it in sysfs (whoever attached it)."""
    found = []
    for backing in sorted(Path("/sys/block").glob("loop*/loop/backing_file")):
        try:
            named = backing.read_text().rstrip("\n")
        except OSError:  # detached while being read
            continue
        found.append((Path("/dev") / backing.parents[1].name, named))
    return found


def loops_over(image: Path) -> list[Path]:
    """The loop devices whose backing file is `image`."""
    image = image.resolve()
    return [device for device, named in _loop_backings() if named in (str(image), f"{image} (deleted)")]


def unmount(point: Path) -> None:
    """Unmount `point` if it is mounted, trying again while it is busy; when the patience is spent, unmount
    it lazily and raise, naming it."""
    point, deadline = point.resolve(), time.monotonic() + PATIENCE_S
    while mounted(point):
        done = subprocess.run(["umount", str(point)], capture_output=True, text=True)
        if done.returncode == 0 or not mounted(point):
            continue
        if time.monotonic() > deadline:
            subprocess.run(["umount", "-l", str(point)], capture_output=True)
            raise RuntimeError(f"{point} was still busy after {PATIENCE_S:.0f} s ({done.stderr.strip()}): "
                               "unmounted lazily, it goes when its last user does")
        time.sleep(0.1)


def unmount_all(source: Path) -> None:
    """Unmount every mount of `source` (a device), as `unmount` does each."""
    for point in mount_points(source):
        unmount(Path(point))


def detach(image: Path) -> None:
    """Detach every loop device over `image` and wait until the kernel has released it (a device still open
    elsewhere is only marked to clear itself on its last close); raise naming any still attached when the
    patience is spent."""
    deadline = time.monotonic() + PATIENCE_S
    while devices := loops_over(image):
        for device in devices:
            subprocess.run(["losetup", "-d", str(device)], capture_output=True)
        if not loops_over(image):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{', '.join(map(str, devices))} still attached to {image} after {PATIENCE_S:.0f} s")
        time.sleep(0.1)


def leftovers(directory: Path) -> list[str]:
    """What is still mounted under `directory`, or attached to a file under it: what a test's own directory
    must not hold after its undo."""
    inside = f"{directory.resolve()}/"
    points = [point for point in mount_points() if point.startswith(inside)]
    devices = [f"{device} over {named}" for device, named in _loop_backings() if named.startswith(inside)]
    return points + devices
