"""The one way stackbench writes a file at a path it was given: whole or not at all, and only a regular file.

Every file a command writes (report documents and their charts, chart images, export's OpenMetrics text,
smallblocks' chart, facts save's captures, the fleet timing file, recovery files) goes through here;
tests/test_file_writes.py fails on any other code in the package that opens a path for writing.

- Whole or nothing: the data goes to a temporary file in the same directory, is fsynced, and is renamed
  into place; a full disk, an error or Ctrl-C leaves neither a half-written file nor the temporary one.
  Several files (a Markdown report and its charts) are put in place together or not at all.
- Regular files only: a device node, a FIFO, a socket, a directory or a symbolic link at the path is
  refused in one line, and so never replaced or written through (root writing `/dev/stdout` or a link to
  `/etc/passwd` would otherwise replace them). Standard output is asked for as `-`, where a command allows.
- An existing regular file is replaced only when the command was given --force.
- What is replaced is what was checked: a new file goes in with a rename that fails if the name was taken
  meanwhile (renameat2 RENAME_NOREPLACE), and an existing one is swapped with the new file atomically
  (RENAME_EXCHANGE) and checked to be the very file looked at before, else swapped back and refused, so a
  link or device swapped in while the data was being written is never replaced. A reader of the path sees
  the old file or the new one, never none. File systems without renameat2 fall back to a hard link for a
  new file and to a check just before the rename for a replaced one.

Standard library only: the audit probe (audit/probe.py) uses it in guests where nothing else is installed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from stackbench.base.errors import StackbenchError, UsageError

STDOUT = "-"

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM)
_FULL = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True)
class Destination:
    """How the command names its output (`-o`, `--openmetrics`), for the fix of every message."""

    option: str
    stdout: bool = False  # whether `-` means standard output for this option
    force: str | None = "--force"  # the option that allows replacing a regular file, if the command has one
    instead: str = ""  # what else to do, when not "choose another file for OPTION"

    def fix(self, what: str) -> str:
        return f"{what}{', or - for standard output' if self.stdout else ''}"

    def another(self) -> str:
        return self.instead or f"choose another file for {self.option}"

    def replace_fix(self) -> str:
        first = f"Pass {self.force} to replace it" if self.force else "Move it away"
        return f"{first}, or {self.another()}"


def is_stdout(path: Path | str) -> bool:
    return str(path) == STDOUT


def check(paths: Sequence[Path], *, force: bool, destination: Destination) -> None:
    """Refuse now what writing would refuse, before a command spends minutes on what it would then not
    write (a scan, a report). Writing checks again: this answer may be stale by then."""
    _refuse_stdout_among(paths, destination)
    for path in paths:
        if not is_stdout(path):
            _checked(Path(path), force, destination)


def write_file(path: Path, data: bytes, *, force: bool, destination: Destination, private: bool = False) -> None:
    """`data` as the whole of `path` (or on standard output for `-`, where `destination` allows it)."""
    write_files([(path, data)], force=force, destination=destination, private=private)


def write_files(files: Sequence[tuple[Path, bytes]], *, force: bool, destination: Destination,
                private: bool = False) -> None:
    """Write every (path, data) or none of them; refuse before writing anything if one path is refused.

    `private` makes new files readable by their owner only (0600; else 0666 less the umask); a replaced
    file keeps its permissions."""
    paths = [Path(path) for path, _ in files]
    _refuse_stdout_among(paths, destination)
    if len(paths) == 1 and is_stdout(paths[0]):
        _to_stdout(files[0][1])
        return
    existing = [_checked(path, force, destination) for path in paths]

    def stage(staged: list[_Staged]) -> None:
        for (path, data), old in zip(files, existing):
            _stage(staged, Path(path), data, old, 0o600 if private else 0o666)

    _all_or_none(stage, paths[0], destination)


def publish(moves: Sequence[tuple[Path, Path]], *, destination: Destination) -> None:
    """Move files already written in full (each beside, or on the same file system as, its destination)
    to their names, all or none, never replacing anything: for outputs built in a staging directory
    (`facts save` into an existing directory)."""
    for _, final in moves:
        _checked(final, False, destination)

    def stage(staged: list[_Staged]) -> None:
        for temporary, final in moves:
            _Staged.moved(staged, Path(temporary), Path(final))

    _all_or_none(stage, Path(moves[0][1]), destination)


def _all_or_none(stage: Callable[[list[_Staged]], None], first: Path, destination: Destination) -> None:
    """Stage the files (`stage` notes each in the list before it exists on disk), then put all of them in
    place; whatever fails, no staged file is left and nothing half-placed stays."""
    staged: list[_Staged] = []
    try:
        stage(staged)
        _commit(staged)
    except OSError as error:
        raise _write_error(error, Path(error.filename or first), destination) from None
    finally:
        for one in staged:
            one.close()


# -- checking ---------------------------------------------------------------------------------------

def _kind(mode: int) -> str | None:
    """What a file of `mode` is, when it is not a regular file."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refuse(path: Path, kind: str, destination: Destination) -> StackbenchError:
    if kind == "a directory":
        return UsageError(f"{path} is a directory", destination.fix(f"Give {destination.option} the name of a file"))
    return StackbenchError(
        f"{path} is {kind}, and stackbench writes only regular files (it neither writes through nor replaces "
        "anything else)", destination.fix(_first_up(destination.instead) if destination.instead
                                          else f"Give {destination.option} the name of a new or regular file"))


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


def _checked(path: Path, force: bool, destination: Destination) -> os.stat_result | None:
    """The regular file at `path` that --force allows to replace, or None when there is none."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    except NotADirectoryError:
        raise StackbenchError(f"cannot write {path}: {path.parent} is not a directory",
                              destination.fix(_first_up(destination.another()))) from None
    if found is None:
        parent = path.parent
        if not parent.is_dir():
            raise StackbenchError(f"cannot write {path}: the directory {parent} does not exist",
                                  destination.fix(f"Create it first, or {destination.another()}"))
        return None
    kind = _kind(found.st_mode)
    if kind is not None:
        raise _refuse(path, kind, destination)
    if not force:
        raise StackbenchError(f"{path} already exists",
                              destination.replace_fix())
    return found


def _refuse_stdout_among(paths: Sequence[Path], destination: Destination) -> None:
    if any(is_stdout(path) for path in paths) and (len(paths) > 1 or not destination.stdout):
        raise UsageError(f"{destination.option} cannot be - (standard output) here",
                         f"Give {destination.option} the name of a file")


def _write_error(error: OSError, path: Path, destination: Destination) -> StackbenchError:
    if isinstance(error, _Changed):
        return StackbenchError(f"{path} changed while stackbench wrote it (it is now {error.now}); nothing was "
                               "replaced", "Check what else writes there, then try again")
    if error.errno in _FULL:
        return StackbenchError(f"no space left to write {path}; nothing was written",
                               f"Free some space there, or {destination.another()}")
    if error.errno == errno.EEXIST:
        return StackbenchError(f"{path} appeared while stackbench wrote it; it was kept and nothing was written",
                               destination.replace_fix())
    return StackbenchError(f"cannot write {path}: {error.strerror or error}",
                           f"Choose a directory you can write to with {destination.option}")


class _Changed(OSError):
    """The file at the name is no longer the one checked (`now` says what it is)."""

    def __init__(self, now: str, filename: str) -> None:
        super().__init__(errno.EEXIST, "changed", filename)
        self.now = now


# -- writing ------------------------------------------------------------------------------------------

class _Staged:
    """One file written in full under a temporary name, and how to put it in place and take it back."""

    def __init__(self, final: Path, old: os.stat_result | None) -> None:
        self.final = final
        self.old = old
        self.source_dir = self.target_dir = -1
        self.temporary: str | None = None  # our file's name in source_dir until it is in place
        self.aside: str | None = None  # the replaced file's name in target_dir once swapped out
        self.placed = False
        self.ours: tuple[int, int] | None = None  # (st_dev, st_ino) of the file we wrote

    @classmethod
    def moved(cls, into: list["_Staged"], temporary: Path, final: Path) -> None:
        """A file written elsewhere (the caller removes it if it is not placed), noted in `into`."""
        staged = cls(final, None)
        into.append(staged)
        staged.source_dir = _open_dir(temporary.parent)
        staged.target_dir = _open_dir(final.parent)
        written = os.lstat(temporary.name, dir_fd=staged.source_dir)
        staged.temporary, staged.ours = temporary.name, (written.st_dev, written.st_ino)

    def close(self) -> None:
        if self.temporary is not None and not self.placed:
            _unlink(self.source_dir, self.temporary)
        for fd in {self.source_dir, self.target_dir} - {-1}:
            os.close(fd)
        self.source_dir = self.target_dir = -1


def _open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _unlink(directory: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except OSError:
        pass


def _stage(into: list[_Staged], final: Path, data: bytes, old: os.stat_result | None, mode: int) -> None:
    """`data` written and fsynced under a new hidden name beside `final`, noted in `into` before anything
    exists on disk, so that whoever holds `into` removes it whatever happens next."""
    staged = _Staged(final, old)
    into.append(staged)
    name = f".{final.name[:200]}.{secrets.token_hex(4)}.partial"
    try:
        staged.source_dir = staged.target_dir = _open_dir(final.parent)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                     dir_fd=staged.source_dir)
        staged.temporary = name
        try:
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            written = os.fstat(fd)
        finally:
            os.close(fd)
        staged.ours = (written.st_dev, written.st_ino)
    except OSError as error:
        error.filename = str(final)
        raise


def _commit(staged: Sequence[_Staged]) -> None:
    """Put every staged file in place, or, if one cannot be, take back those already in place."""
    done: list[_Staged] = []
    try:
        for one in staged:
            _place(one)
            done.append(one)
    except BaseException:
        for one in reversed(done):
            _take_back(one)
        raise
    for one in done:
        if one.aside is not None:
            _unlink(one.target_dir, one.aside)
        try:
            os.fsync(one.target_dir)
        except OSError:
            pass


def _place(one: _Staged) -> None:
    assert one.temporary is not None
    name, replacing = one.final.name, one.old is not None
    try:
        _rename(one, name, _RENAME_EXCHANGE if replacing else _RENAME_NOREPLACE)
    except _Unsupported:
        (_replace_checked if replacing else _link_in)(one, name)
        one.placed = True
        return
    one.placed = True
    if not replacing:
        return
    one.aside = one.temporary  # the name we wrote under now holds what was at the path
    now = os.lstat(one.aside, dir_fd=one.target_dir)
    if not _still_checked(now, one):
        _rename(one, name, _RENAME_EXCHANGE, source=one.aside)  # put back what is there now
        one.placed, one.aside = False, None
        raise _Changed(_kind(now.st_mode) or "another file", str(one.final))


def _still_checked(now: os.stat_result, one: _Staged) -> bool:
    """Whether `now` is the regular file looked at before the data was written."""
    assert one.old is not None
    return (now.st_dev, now.st_ino) == (one.old.st_dev, one.old.st_ino) and stat.S_ISREG(now.st_mode)


def _take_back(one: _Staged) -> None:
    """Undo `_place`: the replaced file back at its name, or our new file removed."""
    name = one.final.name
    try:
        if one.aside is not None:
            _rename(one, name, _RENAME_EXCHANGE, source=one.aside)
            one.aside = None
        else:
            now = os.lstat(name, dir_fd=one.target_dir)
            if (now.st_dev, now.st_ino) == one.ours:
                os.unlink(name, dir_fd=one.target_dir)
    except OSError:
        pass
    one.placed = False


def _replace_checked(one: _Staged, name: str) -> None:
    """Without RENAME_EXCHANGE: the path checked once more just before an ordinary rename."""
    assert one.temporary is not None
    now = os.lstat(name, dir_fd=one.target_dir)
    if not _still_checked(now, one):
        raise _Changed(_kind(now.st_mode) or "another file", str(one.final))
    os.rename(one.temporary, name, src_dir_fd=one.source_dir, dst_dir_fd=one.target_dir)


def _link_in(one: _Staged, name: str) -> None:
    """Without RENAME_NOREPLACE: a hard link, which fails if the name exists, then the temporary name goes."""
    assert one.temporary is not None
    try:
        os.link(one.temporary, name, src_dir_fd=one.source_dir, dst_dir_fd=one.target_dir, follow_symlinks=False)
    except OSError as error:
        if error.errno == errno.EEXIST or error.errno not in _UNSUPPORTED:
            error.filename = str(one.final)
            raise
        try:  # no hard links either (vfat, some network file systems): a check, then the rename
            now = os.lstat(name, dir_fd=one.target_dir)
        except FileNotFoundError:
            os.rename(one.temporary, name, src_dir_fd=one.source_dir, dst_dir_fd=one.target_dir)
            return
        raise _Changed(_kind(now.st_mode) or "an existing file", str(one.final)) from None
    _unlink(one.source_dir, one.temporary)


class _Unsupported(Exception):
    """renameat2 or the flag asked for is not available for this file system."""


_libc: object = None


def _rename(one: _Staged, name: str, flags: int, *, source: str | None = None) -> None:
    """renameat2(2) of `source` (our temporary name by default) to `name` in the target directory."""
    global _libc
    if _libc is None:
        import ctypes

        try:
            library = ctypes.CDLL(None, use_errno=True)
            _libc = library.renameat2
        except (OSError, AttributeError):
            _libc = False
    if _libc is False:
        raise _Unsupported()
    import ctypes

    source_dir = one.target_dir if source is not None else one.source_dir
    result = _libc(source_dir, os.fsencode(source or one.temporary), one.target_dir, os.fsencode(name),
                   ctypes.c_uint(flags))  # type: ignore[operator]
    if result != 0:
        code = ctypes.get_errno()
        if code in _UNSUPPORTED:
            raise _Unsupported()
        raise OSError(code, os.strerror(code), str(one.final))


def _to_stdout(data: bytes) -> None:
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (tests capturing output)
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        buffer.write(data)
    sys.stdout.flush()


__all__ = ["Destination", "STDOUT", "check", "is_stdout", "publish", "write_file", "write_files"]
