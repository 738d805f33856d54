"""Drawn charts on disk, by what they show: the server's (`serve --chart-cache DIR`), shared by its worker
processes and kept across restarts, so that a run's page is answered from a file instead of drawing its
charts with matplotlib (a few tenths of a second to a second per page: docs/server.md, "Pages"), and
`report`'s (report/charts/stored.py: drawn when a run is stored, so that its HTML report imports no
matplotlib; docs/report.md). Both keep theirs in `default_directory()` unless told otherwise.

An entry is one file per page's (or report run's) charts, named by a hash of its key: the key says what the
charts show and how they were drawn (for a page the run's id, label, status and number of cells, whether
redacted; for a report the redacted run itself; and the renderer's version and matplotlib's), so a
relabelled run, a run still measuring or a new renderer gets a new entry and an old one is never served for
it; stale entries age out (the oldest past `entries` files or `max_bytes` in all are removed). A file is
written whole to a temporary name and renamed into place, so a reader sees an entry whole or not at all, and
one that is damaged anyway (a full disk, a hand edit) reads as missing and is drawn again. A per-entry lock
file (flock) makes the processes that miss the same entry at once draw it once: the others wait, then read
it. The directory is the server's own: made private (0700), and refused when another user could write it,
since what it holds is served as the server's images and embedded in reports.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Hashable, Iterator, Sequence

from stackbench.base.errors import StackbenchError

if TYPE_CHECKING:
    from stackbench.report.charts.figure import Figure, ImageFormat

MAX_ENTRY_BYTES = 64 * 1024 * 1024  # a 48-cell run's charts are about 250 KiB
ENTRIES = 2000
MAX_BYTES = 256 * 1024 * 1024  # about a thousand 48-cell runs' charts


@dataclass(frozen=True)
class Chart:
    """A drawn chart as a page shows it: an SVG image with its title and alt text."""

    title: str
    alt: str
    svg: bytes
    kind: str = ""  # the chart kind (report/charts/kinds.py), where the entry says it

    @classmethod
    def of(cls, figure: "Figure") -> "Chart":
        """A drawn figure rendered as SVG (matplotlib's object API, no pyplot state: the drawing is freed
        with the figure)."""
        return cls(figure.title, figure.alt, figure.render("svg"), figure.kind)

    def render(self, fmt: "ImageFormat") -> bytes:
        """As `Figure.render`, so that a document embeds a kept chart as it embeds a drawn one: SVG only."""
        if fmt != "svg":
            raise ValueError(f"a kept chart has no {fmt}: only its SVG is kept")
        return self.svg


@cache
def renderer() -> str:
    """How charts are drawn, for the keys of the charts kept on disk: the charts' own version and
    matplotlib's (its drawing of the same figure changes between releases), read without importing it."""
    from importlib.metadata import version

    from stackbench.report.charts.figure import RENDERER_VERSION

    return f"stackbench charts {RENDERER_VERSION}, matplotlib {version('matplotlib')}"


def default_directory() -> Path:
    """$XDG_CACHE_HOME/stackbench/charts, else ~/.cache/stackbench/charts."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stackbench" / "charts"


class ChartFiles:
    """Drawn charts by key, one file each in `directory`, at most `entries` files and `max_bytes` in all (the
    oldest written or read dropped first)."""

    def __init__(self, directory: Path, entries: int = ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.directory = Path(directory)
        self.entries, self.max_bytes = entries, max_bytes
        _private_directory(self.directory)

    def _path(self, key: Hashable, suffix: str) -> Path:
        return self.directory / (hashlib.sha256(repr(key).encode()).hexdigest() + suffix)

    def has(self, key: Hashable) -> bool:
        return self._path(key, ".json").is_file()

    def read(self, key: Hashable) -> list[Chart] | None:
        """The charts stored for `key`, or None: none stored, or what is stored is not a whole entry of it."""
        path = self._path(key, ".json")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            with os.fdopen(fd, "rb", closefd=False) as entry:
                document = json.loads(entry.read(MAX_ENTRY_BYTES + 1))
            if document.get("key") != repr(key):
                return None
            charts = [Chart(c["title"], c["alt"], c["svg"].encode(), c.get("kind", "")) for c in document["charts"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        finally:
            os.close(fd)
        try:
            os.utime(path)  # read now: the last to be dropped
        except OSError:
            pass
        return charts

    def write(self, key: Hashable, charts: Sequence[Chart]) -> None:
        """Store `charts` for `key` (replacing what was there), then drop the oldest entries past the bound.
        A failure to write (a full disk) leaves no entry and is not an error: the charts are drawn again."""
        path = self._path(key, ".json")
        document = json.dumps({"key": repr(key), "charts": [
            {"title": c.title, "alt": c.alt, "svg": c.svg.decode(), "kind": c.kind} for c in charts]}).encode()
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                with os.fdopen(fd, "wb", closefd=False) as entry:
                    entry.write(document)
            finally:
                os.close(fd)
            os.replace(temporary, path)
        except OSError:
            temporary.unlink(missing_ok=True)
            return
        self._prune()

    @contextmanager
    def drawing(self, key: Hashable) -> Iterator[None]:
        """Held while `key`'s charts are drawn and written: another process drawing them waits, then reads."""
        fd = os.open(self._path(key, ".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock; the file stays (removing it would race another waiter)

    def _prune(self) -> None:
        try:
            entries = [(info.st_mtime, info.st_size, e.path) for e in os.scandir(self.directory)
                       if e.name.endswith(".json") and e.is_file(follow_symlinks=False) for info in [e.stat()]]
        except OSError:
            return
        left, size = len(entries), sum(size for _, size, _ in entries)
        for _, bytes_, path in sorted(entries):
            if left <= self.entries and size <= self.max_bytes:
                return
            for gone in (Path(path), Path(path).with_suffix(".lock")):
                gone.unlink(missing_ok=True)
            left, size = left - 1, size - bytes_


def _private_directory(directory: Path) -> None:
    """Make `directory` (0700) or check that only this user can write it."""
    fix = ("Give `serve --chart-cache` a directory of your own that no other user can write, or make this one "
           "yours (chmod 700)")
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.stat(directory, follow_symlinks=False)
    except OSError as failure:
        raise StackbenchError(f"cannot make the chart cache {directory}: {failure.strerror}", fix) from None
    if not stat.S_ISDIR(info.st_mode):
        raise StackbenchError(f"the chart cache {directory} is not a directory", fix)
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise StackbenchError(f"the chart cache {directory} can be written by another user", fix)
