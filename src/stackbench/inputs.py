"""Reading files a user names, with a bound: never a device, a FIFO or a file larger than a limit.

`stackbench import /dev/zero` once read until memory ran out. Every file a user hands over (fio outputs,
saved cryptsetup output, cpuinfo, VM configs, storage.cfg, saved facts) goes through `read_input`, which
refuses what is not a regular file and what is larger than the limit for its kind, with a one-line error
naming the fix. Standard input is read with the same bound. The limits are documented in README.md
("Input limits") and are far above any real output of the tools that write these files.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO

from stackbench.errors import StackbenchError
from stackbench.units import format_bytes

MiB = 1024**2

# Per kind of input: the largest file accepted. fio json+ of a long multi-job run with latency buckets is a
# few MiB; client/server output of many hosts tens of MiB.
FIO_OUTPUT_LIMIT = 256 * MiB
TEXT_CAPTURE_LIMIT = 16 * MiB  # cryptsetup benchmark, cpuinfo, VM configs, storage.cfg, saved probe files


class InputError(StackbenchError):
    """A file the user named cannot be read as input (missing, not a regular file, too large)."""


def read_input(path: Path, *, limit: int, what: str) -> bytes:
    """The whole content of the regular file `path`, refused when it is anything else or over `limit` bytes.

    The path is checked before it is opened (opening some devices has effects, a tape rewinds) and again
    through the open descriptor, so what is read is what was checked: a path swapped for a FIFO between
    the check and the read cannot block us.
    """
    try:
        before = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path} does not exist", f"Check the path of {what}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}", "Check the path and its permissions") from None
    if stat.S_ISDIR(before.st_mode):
        raise InputError(f"{path} is a directory, not {what}", "Pass the file itself, e.g. DIR/*.json")
    if not stat.S_ISREG(before.st_mode):
        raise InputError(
            f"{path} is {_kind(before.st_mode)}, not a regular file",
            f"Save {what} to a regular file first and pass that",
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputError(f"{path} does not exist", f"Check the path of {what}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not {what}", "Pass the file itself, e.g. DIR/*.json") from None
    except PermissionError:
        raise InputError(f"cannot read {path}: permission denied", "Check the file's permissions") from None
    except OSError as error:
        raise InputError(f"cannot open {path}: {error.strerror}", f"Pass a regular file holding {what}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path} is a directory, not {what}", "Pass the file itself, e.g. DIR/*.json")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(
                f"{path} is {_kind(info.st_mode)}, not a regular file",
                f"Save {what} to a regular file first and pass that",
            )
        if info.st_size > limit:
            raise InputError(
                f"{path} is {format_bytes(info.st_size)}, more than the {format_bytes(limit)} accepted for {what}",
                "Pass the right file; the limit is far above any real output of this kind",
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return _read_capped(handle, limit, str(path), what)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}", "Check the file and the disk it is on") from None
    finally:
        if fd >= 0:
            os.close(fd)


def read_stdin(*, limit: int, what: str) -> bytes:
    """Standard input, up to `limit` bytes; more is refused rather than read without end."""
    return _read_capped(sys.stdin.buffer, limit, "standard input", what)


def _read_capped(handle: BinaryIO, limit: int, name: str, what: str) -> bytes:
    # Read one byte past the limit: a file that grew after fstat (or a pipe) is caught the same way.
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(
            f"{name} holds more than the {format_bytes(limit)} accepted for {what}",
            "Pass the right input; the limit is far above any real output of this kind",
        )
    return data


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
