"""Watching the processes a test's commands start, from /proc, independently of stackbench's own code."""

from __future__ import annotations

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended: it only waits to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def pids_written(path: Path, seconds: float = 60) -> list[int]:
    """The pids a shell command wrote to `path` (`echo $! > path`), once a whole line is there."""
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [int(line) for line in path.read_text().split()]


def still_running(pids: list[int], seconds: float = 3.0) -> list[int]:
    """The pids still running after up to `seconds` (a killed orphan is reaped by init, not at once)."""
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [pid for pid in pids if alive(pid)]
