"""Reading the files a user names, with a bound: never a device, a FIFO or a socket, never more than a cap.

`stackbench import /dev/zero` read until memory ran out, `run --hosts-file /dev/zero` until the kernel's OOM
killer ended it, and `import FIFO` waited forever for a writer. Every file a user hands over, on the command
line or inside a directory the user names (the fio outputs of `import`, `--hosts-file`, `--token-file`,
`--ca-file`, crypto's `--from` and `--cpuinfo`, audit's `--from` directory, `--vm-config`, `--storage-cfg`),
is read by `read_input` with the cap of its kind (`KINDS`, documented in SECURITY.md):

- what is not a regular file (a FIFO, a socket, a device node, a directory) is refused after `stat` and
  before `open`: opening a FIFO waits for a writer, opening some devices has effects;
- the open itself is non-blocking (O_NONBLOCK, O_NOCTTY) and the descriptor is checked again, so a path
  swapped for a FIFO or a device between the two cannot block us or be read;
- a file over the cap is refused from its size, and at most the cap plus one byte is ever read (a file that
  grows while it is read is caught too), with one line naming the file, the cap and the fix;
- memory is the file's own size: one buffer of exactly that size, never one of the cap's size.

Standard input, where a command documents `-` (crypto `--from -`) or reads a line (`--password-stdin`), is
read with the same caps. tests/test_architecture.py fails when a module reads a file any other way; files
of the system and of stackbench itself (/proc, /sys, fio's output of our own runs) are listed there.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from stackbench.base.errors import StackbenchError
from stackbench.base.units import format_bytes

KiB = 1024
MiB = 1024**2
GiB = 1024**3
_CHUNK = 1 * MiB  # what is read at a time past the expected size (a pipe, a file that grows)


@dataclass(frozen=True)
class InputKind:
    """One kind of file a user hands over: what it is called in messages, its cap, and what to do when over."""

    what: str
    limit: int
    fix: str


# The caps are far above any real file of each kind; each says why in its fix. SECURITY.md lists them
# (tests/test_inputs.py compares the two).
FIO_OUTPUT = InputKind(
    "a fio output", 1 * GiB,
    "Pass one fio run's output per file: a json+ output of 512 jobs is under 100 MiB; of a --status-interval "
    "log only the last document counts, so keep that one",
)
FACTS_FILE = InputKind(
    "a saved facts file", 256 * MiB,
    "Pass the directory `stackbench facts save` wrote; its largest file (zfs get of every dataset and snapshot) "
    "is far below this",
)
VM_CONFIG = InputKind(
    "a VM config", 16 * MiB, "Pass the VM's .conf (Proxmox) or domain XML (libvirt), which are a few KiB",
)
STORAGE_CFG = InputKind("a Proxmox storage.cfg", 16 * MiB, "Pass /etc/pve/storage.cfg, which is a few KiB")
CRYPTSETUP_OUTPUT = InputKind(
    "a saved `cryptsetup benchmark` output", 16 * MiB,
    "Pass the output of one `cryptsetup benchmark`, which is a few KiB",
)
CPUINFO = InputKind("a saved /proc/cpuinfo", 16 * MiB, "Pass a copy of /proc/cpuinfo, under 1 MiB even with 512 CPUs")
HOSTS_FILE = InputKind("a hosts file", 1 * MiB, "Pass a text file with one host per line (at most 256 hosts)")
TOKEN_FILE = InputKind("a token file", 64 * KiB, "Pass a file whose first line is the token (43 characters)")
CA_FILE = InputKind("a CA certificate file", 16 * MiB, "Pass the PEM file of the CA that signed the server's certificate")
SSH_CONFIG = InputKind("an ssh config", 1 * MiB, "Pass an ssh config file (ssh_config(5)), which is a few KiB")
PASSWORD = InputKind("a password", 4 * KiB, "Pipe in the password alone, on one line")
TUNE_KNOB_FILE = InputKind("a tune knob file", 1 * MiB, "Pass a TOML file of [[knob]] tables, a few KiB")

KINDS: tuple[InputKind, ...] = (
    FIO_OUTPUT, FACTS_FILE, VM_CONFIG, STORAGE_CFG, CRYPTSETUP_OUTPUT, CPUINFO, HOSTS_FILE, TOKEN_FILE, CA_FILE,
    SSH_CONFIG, PASSWORD, TUNE_KNOB_FILE,
)


class InputError(StackbenchError):
    """A file the user named cannot be read as input (missing, not a regular file, too large)."""


def read_input(path: Path, kind: InputKind) -> bytes:
    """The whole content of the regular file `path`, refused when it is anything else or over `kind.limit`."""
    data = _read(Path(path), kind, missing_ok=False)
    assert data is not None
    return data


def read_input_text(path: Path, kind: InputKind) -> str:
    """`read_input` decoded as UTF-8, undecodable bytes replaced (the parsers say what they cannot read)."""
    return read_input(path, kind).decode("utf-8", errors="replace")


def read_optional_text(path: Path, kind: InputKind) -> str | None:
    """Like `read_input_text`, but None when nothing is at `path` (a file a saved directory may lack)."""
    data = _read(Path(path), kind, missing_ok=True)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_input_or_stdin(path: Path, kind: InputKind) -> tuple[bytes, str]:
    """(content, its name in messages): standard input for `-`, where a command documents it, else the file."""
    if str(path) == "-":
        return read_stdin(kind), "stdin"
    return read_input(path, kind), str(path)


def read_stdin(kind: InputKind) -> bytes:
    """Standard input to its end, up to the cap; more is refused rather than read without end."""
    if sys.stdin is None:
        return b""
    stream = sys.stdin.buffer
    try:
        return _read_capped(stream, kind.limit, _expected_size(stream), "standard input", kind)
    except OSError as error:
        raise InputError(f"cannot read standard input: {error.strerror or error}",
                         f"Pipe in {kind.what}, or pass it as a file") from None


def read_stdin_line(kind: InputKind) -> str:
    """The first line of standard input without its line break, up to the cap (a line of /dev/zero has no end)."""
    if sys.stdin is None:
        return ""
    stream = getattr(sys.stdin, "buffer", None)  # a text stream without one where a test replaced stdin
    line = stream.readline(kind.limit + 1) if stream is not None else sys.stdin.readline(kind.limit + 1)
    if len(line) > kind.limit and line[-1:] not in (b"\n", "\n"):
        raise InputError(f"the first line of standard input is longer than the {format_bytes(kind.limit)} accepted "
                         f"for {kind.what}", kind.fix)
    return (line.decode("utf-8") if isinstance(line, bytes) else line).rstrip("\r\n")


def check_input(path: Path, kind: InputKind) -> None:
    """The checks of `read_input` for a file another program reads (ssh's `-F`): a regular file within the
    cap, by its path now. What that program opens later is up to it; stackbench never opens it."""
    _checked(path, kind, missing_ok=False)


def _checked(path: Path, kind: InputKind, *, missing_ok: bool) -> bool:
    """Whether a regular file within the cap is at `path` (False: nothing is, and `missing_ok`), by `stat`
    alone, before anything opens it; InputError for anything else."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return False
        raise InputError(f"{path} does not exist", f"Check the path of {kind.what}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}", "Check the path and its permissions") from None
    _refuse_unless_regular(path, info.st_mode, kind)
    if info.st_size > kind.limit:
        raise _over(path, info.st_size, kind)
    return True


def _read(path: Path, kind: InputKind, *, missing_ok: bool) -> bytes | None:
    """The checks of the module docstring, in order: stat, refuse, open without blocking, fstat, bounded read."""
    if not _checked(path, kind, missing_ok=missing_ok):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise InputError(f"{path} does not exist", f"Check the path of {kind.what}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not {kind.what}", "Pass the file itself") from None
    except PermissionError:
        raise InputError(f"cannot read {path}: permission denied", "Check the file's permissions") from None
    except OSError as error:
        raise InputError(f"cannot open {path}: {error.strerror}", "Pass a regular file: save the content to one first") from None
    try:
        info = os.fstat(fd)
        _refuse_unless_regular(path, info.st_mode, kind)
        if info.st_size > kind.limit:
            raise _over(path, info.st_size, kind)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", buffering=0, closefd=True) as handle:
            fd = -1
            return _read_capped(handle, kind.limit, info.st_size, str(path), kind)  # type: ignore[arg-type]
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}", "Check the file and the disk it is on") from None
    finally:
        if fd >= 0:
            os.close(fd)


def _refuse_unless_regular(path: Path, mode: int, kind: InputKind) -> None:
    if stat.S_ISDIR(mode):
        raise InputError(f"{path} is a directory, not {kind.what}", "Pass the file itself")
    if not stat.S_ISREG(mode):
        raise InputError(f"{path} is {_kind(mode)}, not a regular file with {kind.what}",
                         "Pass a regular file: save the content to one first")


def _over(path: Path | str, size: int, kind: InputKind) -> InputError:
    return InputError(f"{path} is {format_bytes(size)}, more than the {format_bytes(kind.limit)} accepted for "
                      f"{kind.what}", kind.fix)


def _expected_size(stream: BinaryIO) -> int:
    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _read_capped(handle: BinaryIO, limit: int, expected: int, name: str, kind: InputKind) -> bytes:
    """At most `limit` bytes, refused past that. The first read asks for exactly the expected size plus one
    byte, so a regular file costs one buffer of its own size; only what is longer (a pipe, a file that grew
    after fstat) is read in further chunks, up to one byte past the cap."""
    first = handle.read(min(expected, limit) + 1) or b""
    chunks, total = [first], len(first)
    while first and total <= limit:
        more = handle.read(min(_CHUNK, limit + 1 - total))
        if not more:
            break
        chunks.append(more)
        total += len(more)
    if total > limit:
        raise InputError(f"{name} holds more than the {format_bytes(limit)} accepted for {kind.what}", kind.fix)
    return first if len(chunks) == 1 else b"".join(chunks)


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
