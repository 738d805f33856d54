"""What Linux's /proc says about other processes, and ending one without hitting a stranger.

Stopping fio needs it, whose job processes call setsid and so are reached by nothing sent to fio's process
group (`engine/fio.py` kills them by parent pid); so does cleaning up after a run whose stackbench was
killed, where fio's leftovers are found by the run's own paths (`abandoned.py`), ending a user command's
process group (`user_commands.py`), and telling whether a file is in use (`safety.py`). A pid can
be reused the moment its process is gone, so `end` holds a pidfd and asks the caller's test again on
that very process before it signals it.
"""

from __future__ import annotations

import os
import select
import signal
import time
from pathlib import Path
from typing import Callable, Iterator

PROC = Path("/proc")
DELETED = " (deleted)"  # what readlink of /proc/PID/cwd or fd/N appends when the file is gone


def pids() -> Iterator[int]:
    """Every process now running, but this one."""
    me = os.getpid()
    try:
        entries = os.listdir(PROC)
    except OSError:
        return
    for name in entries:
        if name.isdigit() and int(name) != me:
            yield int(name)


def stat_fields(path: str | os.PathLike[str]) -> list[str] | None:
    """The fields of a /proc/PID/stat after the command name, or None (gone, unreadable or torn); index 0 is
    the state (field 3 of proc(5)). The name sits in parentheses and may itself hold spaces and
    parentheses, so the fields start after the last ')'. The one parser of that line: the conditions
    sampler reads it for every process every second, hence a single bounded os.read and no file object."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = os.read(handle, 4096)  # a stat line is under 1 KiB: the name is at most 15 bytes
    except OSError:
        return None
    finally:
        os.close(handle)
    _, paren, rest = raw.rpartition(b")")
    return rest.decode("ascii", "replace").split() if paren else None


def _stat_fields(pid: int) -> list[str] | None:
    return stat_fields(PROC / str(pid) / "stat")


def _stat_number(pid: int, index: int) -> int | None:
    fields = _stat_fields(pid)
    try:
        return int(fields[index]) if fields else None
    except (IndexError, ValueError):
        return None


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22): with the pid, it names one process."""
    return _stat_number(pid, 19)


def parent_of(pid: int) -> int | None:
    return _stat_number(pid, 1)


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie has ended: it only waits for its parent to collect its status)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] not in ("Z", "X")


def group_members(group: int) -> list[int]:
    """The running processes of a process group (a zombie waiting to be reaped is not running)."""
    return [pid for pid in pids() if _stat_number(pid, 2) == group and alive(pid)]


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid` (fio's job processes, while fio's main process lives)."""
    return [child for child in pids() if parent_of(child) == pid]


def _link(path: Path) -> str | None:
    try:
        target = os.readlink(path)
    except OSError:
        return None
    return target[: -len(DELETED)] if target.endswith(DELETED) else target


def cwd(pid: int) -> str | None:
    return _link(PROC / str(pid) / "cwd")


def executable(pid: int) -> str | None:
    return _link(PROC / str(pid) / "exe")


def arguments(pid: int) -> list[str]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def open_files(pid: int) -> list[str]:
    """The paths of the process's open file descriptors (sockets, pipes and the like as Linux names them)."""
    directory = PROC / str(pid) / "fd"
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [target for name in names if (target := _link(directory / name)) is not None]


def opened_by(is_it: Callable[[os.stat_result], bool]) -> list[int]:
    """The processes with a file open for which `is_it(its stat)` holds (a file in use: a VM's disk image)."""
    found = []
    for pid in pids():
        directory = PROC / str(pid) / "fd"
        try:
            names = os.listdir(directory)
        except OSError:  # gone, or another user's
            continue
        for name in names:
            try:
                if is_it(os.stat(directory / name)):
                    found.append(pid)
                    break
            except OSError:
                continue
    return found


def command_name(pid: int) -> str:
    try:
        return (PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return "?"


def owner(pid: int) -> int | None:
    try:
        return (PROC / str(pid)).stat().st_uid
    except OSError:
        return None


def end(pid: int, still_ours: Callable[[int], bool], sig: signal.Signals = signal.SIGKILL) -> bool:
    """Send `sig` to `pid` if `still_ours(pid)` holds for the process that has the pid now; whether it was sent.

    The pidfd is opened first and the test asked after, so the signal reaches the process that passed it
    even if the first one has died and its pid been reused in between. Raises OSError when signalling is
    refused (EPERM)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        if not still_ours(pid):
            return False
        try:
            signal.pidfd_send_signal(pidfd, sig)
        except ProcessLookupError:
            return False
        return True
    finally:
        os.close(pidfd)


def wait_gone(pids_: list[int], seconds: float) -> list[int]:
    """Wait up to `seconds` for these processes (not our children) to exit; those still there after it."""
    fds = {}
    for pid in pids_:
        try:
            fds[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
    try:
        left = dict(fds)
        deadline = time.monotonic() + seconds
        while left:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select(list(left.values()), [], [], remaining)
            for fd in ready:
                left = {p: f for p, f in left.items() if f != fd}
        return sorted(left)
    finally:
        for fd in fds.values():
            os.close(fd)

