"""A real two-storey stack for the stack tests: ext4 (1 KiB blocks) on a loop device over a file on ext4
(4 KiB blocks) on another loop device over a file in the test's directory. Made with losetup and mkfs.ext4,
as root; unmounted and detached afterwards, whatever happened (tests/mounts.py).

What the tests expect of it is written from how it is built here, never from what the discovery prints.
"""

from __future__ import annotations

import os
import subprocess
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from mounts import detach, unmount

MiB = 1024**2


@dataclass(frozen=True)
class LoopChain:
    outer_image: Path  # the file in the test's directory
    outer_device: Path  # the loop device over it
    lower: Path  # where ext4 on outer_device is mounted (4 KiB blocks)
    inner_image: Path  # a file on that ext4
    inner_device: Path  # the loop device over it
    upper: Path  # where ext4 on inner_device is mounted (1 KiB blocks): the target


def _run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def findmnt(path: Path, column: str) -> str:
    """A column of findmnt for the file system holding `path`: util-linux's view, not stackbench's."""
    return _run("findmnt", "-n", "-o", column, "-T", str(path))


def _storey(image: Path, size: int, block: int, mount_point: Path, undo: ExitStack,
            direct_io: bool = False) -> Path:
    """ext4 with `block`-byte blocks on a loop device over a new sparse `image`, mounted at `mount_point`.
    Each step's undo is pushed on `undo` before the step is made (tests/mounts.py: it does nothing where
    nothing was made), so a step that fails, or an interruption after a command did its work but before its
    answer was read, leaves nothing behind. With `direct_io` the loop device reads and writes its backing
    file with O_DIRECT, in the context of whoever sent it the request (its cgroup's blkio throttle applies),
    not through the page cache and its writeback."""
    undo.callback(image.unlink, missing_ok=True)
    with open(image, "wb") as handle:
        handle.truncate(size)
    direct = ["--direct-io=on"] if direct_io else []
    undo.callback(detach, image)
    device = Path(_run("losetup", "-f", "--show", *direct, str(image)))
    mount_point.mkdir()
    undo.callback(unmount, mount_point)
    _run("mkfs.ext4", "-q", "-F", "-b", str(block), str(device))
    _run("mount", str(device), str(mount_point))
    return device


def build(tmp_path: Path, direct_io: bool = False) -> Iterator[LoopChain]:
    """The chain, for a fixture to `yield from`; afterwards, whatever happened in the set-up or the test,
    unmounted, detached and its images removed, top down (an undo that fails does not stop the others; its
    error is raised after them)."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices and mounts")
    with ExitStack() as undo:
        outer, lower = tmp_path / "outer.img", tmp_path / "lower"
        outer_device = _storey(outer, 160 * MiB, 4096, lower, undo, direct_io)
        inner, upper = lower / "inner.img", tmp_path / "upper"
        inner_device = _storey(inner, 48 * MiB, 1024, upper, undo, direct_io)
        yield LoopChain(outer, outer_device, lower, inner, inner_device, upper)
