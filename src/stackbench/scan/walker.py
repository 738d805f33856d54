"""A parallel, constant-memory walk that counts regular files into a `SizeHistogram`.

Speed is the point: users run this on pools with tens of millions of files and cold caches, where each
`lstat` waits on metadata I/O. Python threads would serialise on the GIL once the metadata is cached, so the
walk uses worker processes (fork), each a directory reader pulling whole subtrees from a shared queue;
several readers keep several metadata reads in flight on a cold cache and use every core on a warm one.
The parent first expands the top of each tree breadth-first into enough subtrees to balance the workers.

Memory is the bins plus one stack of directory names per worker. Symlinks are never followed or counted;
hard links count once per path (as `find -type f` does); unreadable directories are counted, never fatal.
Ctrl-C stops every worker at its next directory and the partial histogram is returned, marked partial.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import stat
import queue
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from stackbench.base.errors import StackbenchError
from stackbench.scan.histogram import SizeHistogram

_PROGRESS_EVERY = 2048
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class WalkResult:
    histogram: SizeHistogram
    seconds: float
    unreadable: int = 0
    unreadable_examples: list[str] = field(default_factory=list)
    partial: bool = False
    workers: int = 1

    @property
    def files_per_second(self) -> float:
        return self.histogram.files / self.seconds if self.seconds > 0 else 0.0


class _Walker:
    """Walks subtrees depth-first into one histogram; shared by the parent (expansion) and the workers."""

    def __init__(self, one_file_system: bool, counter: "mp.sharedctypes.Synchronized | None" = None) -> None:
        self.histogram = SizeHistogram()
        self.one_file_system = one_file_system
        self.unreadable = 0
        self.examples: list[str] = []
        self.counter = counter
        self._pending = 0

    def list_dir(self, path: str, device: int) -> list[str]:
        """Count the files of one directory; return its subdirectories (same file system if asked)."""
        subdirs = []
        add = self.histogram.add
        prefix = path.rstrip("/") + "/"
        try:
            # Scanning an open directory fd makes each entry's lstat an fstatat(fd, name): no path walk
            # per file, which is most of the cost once the metadata is cached.
            fd = os.open(path, _DIR_FLAGS)
        except OSError:
            self._unreadable(path)
            return subdirs
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if self.one_file_system and entry.stat(follow_symlinks=False).st_dev != device:
                                continue
                            subdirs.append(prefix + entry.name)
                        elif entry.is_file(follow_symlinks=False):
                            add(entry.stat(follow_symlinks=False).st_size)
                            self._pending += 1
                    except OSError:
                        continue  # vanished between readdir and lstat
        except OSError:
            self._unreadable(path)
        finally:
            os.close(fd)
        if self.counter is not None and self._pending >= _PROGRESS_EVERY:
            with self.counter.get_lock():
                self.counter.value += self._pending
            self._pending = 0
        return subdirs

    def _unreadable(self, path: str) -> None:
        self.unreadable += 1
        if len(self.examples) < 5:
            self.examples.append(path)

    def walk(self, root: str, device: int, stop: "mp.synchronize.Event | None" = None) -> bool:
        """Depth-first over `root`; False when stopped early."""
        stack = [root]
        while stack:
            if stop is not None and stop.is_set():
                return False
            stack.extend(self.list_dir(stack.pop(), device))
        return True

    def flush(self) -> None:
        if self.counter is not None and self._pending:
            with self.counter.get_lock():
                self.counter.value += self._pending
            self._pending = 0


def _worker(work: "mp.Queue", results: "mp.Queue", stop, counter, one_file_system: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; we stop via `stop`
    walker = _Walker(one_file_system, counter)
    while not stop.is_set():
        item = work.get()
        if item is None:
            break
        path, device = item
        if not walker.walk(path, device, stop):
            break
    walker.flush()
    results.put((walker.histogram.counts, walker.histogram.sizes, walker.unreadable, walker.examples))


def walk_histogram(
    paths: list[Path],
    *,
    workers: int | None = None,
    one_file_system: bool = False,
    on_progress: Callable[[int, float], None] | None = None,
) -> WalkResult:
    """Histogram of every regular file under `paths`. A path that is a regular file counts itself."""
    started = time.monotonic()
    workers = workers or max(2, 2 * (os.cpu_count() or 1))
    ctx = mp.get_context("fork")
    counter = ctx.Value("q", 0)
    parent = _Walker(one_file_system, counter)
    units: deque[tuple[str, int]] = deque()
    for path in paths:
        # A symlink named on the command line is followed, as `find -H` does; links met inside are not.
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise StackbenchError(f"{path} does not exist (or is a broken symlink)", "Check the path") from None
        except OSError as error:
            raise StackbenchError(f"cannot read {path}: {error.strerror}", "Check the path and permissions") from None
        if stat.S_ISDIR(st.st_mode):
            units.append((os.path.realpath(path), st.st_dev))
        elif stat.S_ISREG(st.st_mode):
            parent.histogram.add(st.st_size)
        else:
            raise StackbenchError(f"{path} is neither a directory nor a regular file", "Pass directories to scan")
    # Expand the tops of the trees until there are enough subtrees to keep every worker busy.
    target = workers * 16
    interrupted = False
    try:
        while units and len(units) < target:
            path, device = units.popleft()
            units.extend((sub, device) for sub in parent.list_dir(path, device))
    except KeyboardInterrupt:
        interrupted = True
    parent.flush()
    histogram = parent.histogram
    unreadable, examples = parent.unreadable, list(parent.examples)
    if units and not interrupted:
        work: mp.Queue = ctx.Queue()
        results: mp.Queue = ctx.Queue()
        stop = ctx.Event()
        for unit in units:
            work.put(unit)
        count = min(workers, len(units))
        for _ in range(count):
            work.put(None)
        procs = [ctx.Process(target=_worker, args=(work, results, stop, counter, one_file_system)) for _ in range(count)]
        for proc in procs:
            proc.start()
        received = 0
        try:
            while received < count:
                try:
                    counts, sizes, bad, bad_examples = results.get(timeout=0.2)
                except queue.Empty:
                    if on_progress:
                        on_progress(counter.value, time.monotonic() - started)
                    if not any(p.is_alive() for p in procs) and results.empty():
                        raise StackbenchError(
                            "a scan worker died without reporting", "Run again; if it repeats, report it"
                        ) from None
                    continue
                received += 1
                histogram.merge(SizeHistogram(counts, sizes))
                unreadable += bad
                examples.extend(bad_examples[: max(0, 5 - len(examples))])
        except KeyboardInterrupt:
            interrupted = True
            stop.set()
            while received < count:
                try:
                    counts, sizes, bad, bad_examples = results.get(timeout=10)
                except queue.Empty:
                    break
                received += 1
                histogram.merge(SizeHistogram(counts, sizes))
                unreadable += bad
        finally:
            stop.set()
            for proc in procs:
                proc.join(timeout=5)
                if proc.is_alive():
                    proc.kill()
    return WalkResult(
        histogram=histogram,
        seconds=time.monotonic() - started,
        unreadable=unreadable,
        unreadable_examples=examples,
        partial=interrupted,
        workers=workers,
    )
