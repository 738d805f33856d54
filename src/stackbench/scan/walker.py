"""A parallel, constant-memory walk that counts regular files into a `SizeHistogram`.

Speed is the point: users run this on pools with tens of millions of files and compare it with `du` and
`gdu`. What limits a walk differs with the cache, and so does the parallelism that helps:

- Warm (metadata cached), each file costs one `lstat` system call plus the interpreter's work around it, all
  on the CPU. Python threads would serialise on the interpreter lock (two to eight reader threads per process
  cost 10 to 25 % more CPU than one, measured), so each reader is a worker process (fork), one per CPU: every
  core works and nothing more is paid.
- Cold, each directory block and inode table block is a read from the device, and a reader waits for each
  in turn (as `du` does). While the readers spend most of their time waiting, the parent doubles them, up to
  `_MOST_PER_CPU` per CPU, so that many metadata reads are in flight (`_Pool.grow`).

All readers take work from one shared queue (a SOCK_SEQPACKET socket pair: each message goes whole to
exactly one reader) and walk what they took depth-first on a stack of their own. A reader gives work away
only while another reader is idle, and never waits to do so (a full queue means it keeps the work): the
shallowest directories of its stack, and the files of a large directory in batches, so that a directory of a
million files is stat'ed by every reader rather than by the one that listed it. Readers count by
`size.bit_length()` into lists, cheaper per file than a dictionary of bins; the parent folds them into bins.

Which entries are files comes from the directory listing itself (d_type), so only regular files cost an
`lstat`, and it is an `fstatat` on the open directory, not a walk of the full path. Symlinks are never
followed or counted; hard links count once per path (as `find -type f` does); unreadable directories are
counted, never fatal; a directory whose path is longer than PATH_MAX is opened one component at a time.
Memory is constant: the bins, a stack of directory names per reader and a batch of at most `_BATCH` entries.
Ctrl-C stops every reader at its next directory or batch and the partial histogram is returned, marked
partial; a reader whose parent died stops too.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
import time
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from stackbench.base.errors import StackbenchError
from stackbench.scan.histogram import SizeHistogram, from_bit_lengths

if TYPE_CHECKING:
    import socket

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_BATCH = 1024  # regular files stat'ed, or handed to an idle reader, at a time
_MESSAGE_MAX = 65536  # bytes of one queued message; larger work is done where it was found
_MOST_PER_CPU = 8  # readers a walk may grow to, per CPU, while they wait for the device (cold)
_PROGRESS_EVERY = 2048
_LENGTHS = 66  # size.bit_length() of any st_size (a signed 64-bit off_t), with room to spare

# Messages on the work queue: a directory tree to walk, a batch of file names in one directory, or stop.
_TREE = b"D"  # _TREE + st_dev (8 bytes) + the directory's path
_FILES = b"F"  # _FILES + the directory's path + NUL + the names, NUL-separated
_DEVICE = struct.Struct("=Q")

# The board, shared by every process (an anonymous shared mapping made before fork), in 8-byte slots: leave
# (the walk is finished or stopped), units queued or being walked, readers waiting for work, readers started,
# then the files each reader has counted.
_STOP, _PENDING, _IDLE, _READERS, _FIRST_READER = 0, 1, 2, 3, 4


@dataclass
class WalkResult:
    histogram: SizeHistogram
    seconds: float
    unreadable: int = 0
    unreadable_examples: list[str] = field(default_factory=list)
    partial: bool = False
    workers: int = 1
    files_per_reader: list[int] = field(default_factory=list)  # files each reader stat'ed: how the work spread

    @property
    def files_per_second(self) -> float:
        return self.histogram.files / self.seconds if self.seconds > 0 else 0.0


def open_directory(path: str | bytes) -> int:
    """An fd of the directory at `path`, never through a symlink. A path longer than PATH_MAX (the kernel
    refuses it whole) is opened one component at a time, as `du` and `find` reach such directories."""
    try:
        return os.open(path, _DIR_FLAGS)
    except OSError as error:
        if error.errno != errno.ENAMETOOLONG:
            raise
    separator = b"/" if isinstance(path, bytes) else "/"
    fd = os.open(separator, _DIR_FLAGS)
    try:
        for part in path.split(separator):  # type: ignore[arg-type]  # str split by str, bytes by bytes
            if part:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


class _Board:
    """What the readers of every process share: the stop flag, the count of queued or running work units,
    the count of idle readers (the signal to give work away), and each reader's file count (progress)."""

    def __init__(self, readers: int, lock: Any) -> None:
        import mmap

        self._map = mmap.mmap(-1, 8 * (_FIRST_READER + readers))  # MAP_SHARED: seen across fork
        self.slots = memoryview(self._map).cast("q")
        self.lock = lock

    def add(self, slot: int, delta: int) -> int:
        with self.lock:
            self.slots[slot] += delta
            return self.slots[slot]

    def files(self) -> int:
        return sum(self.slots[_FIRST_READER:])


class _Reader:
    """One directory reader (a worker process), with a histogram, a stack and a batch of its own."""

    def __init__(self, board: _Board, index: int, queue: tuple["socket.socket", "socket.socket"],
                 one_file_system: bool, parent: int) -> None:
        import socket

        self.board = board
        self.slots = board.slots
        self.slot = _FIRST_READER + index
        self.take, self.post = queue  # messages sent on `post` are received, each by one reader, from `take`
        self.one_file_system = one_file_system
        self.parent = parent
        self.counts = [0] * _LENGTHS
        self.sizes = [0] * _LENGTHS
        self.files = 0
        self.unreadable = 0
        self.examples: list[str] = []
        self.inbox = bytearray(_MESSAGE_MAX)
        self.dont_wait = socket.MSG_DONTWAIT

    def stopped(self) -> bool:
        """Stop asked by the parent (Ctrl-C), or the parent gone: nobody would read the histogram."""
        return bool(self.slots[_STOP]) or os.getppid() != self.parent

    def run(self) -> None:
        """Take work until the walk is done (every unit finished) or stopped."""
        while True:
            self.board.add(_IDLE, 1)
            try:
                size = self.take.recv_into(self.inbox)
            except TimeoutError:  # nothing for a second: look whether the parent stopped or is gone
                size = -1
            finally:
                self.board.add(_IDLE, -1)
            if size == 0 or self.stopped():
                break
            if size < 0:
                continue
            message = bytes(self.inbox[:size])
            if message[:1] == _TREE:
                (device,) = _DEVICE.unpack_from(message, 1)
                self.walk(os.fsdecode(message[1 + _DEVICE.size:]), device)
            else:
                path, *names = message[1:].split(b"\0")
                self.count_names(path, names)
            if self.stopped():
                break
            if self.board.add(_PENDING, -1) == 0:  # the last unit of the walk: every reader may leave
                self.slots[_STOP] = 1
                _wake_readers(self.post, self.slots[_READERS])
                break

    def give(self, message: bytes) -> bool:
        """Queue `message` for an idle reader; False (keep the work) when it is too big or the queue is full.
        The unit is counted pending before it is sent, so the walk cannot look finished while it travels."""
        if len(message) > _MESSAGE_MAX:
            return False
        self.board.add(_PENDING, 1)
        try:
            self.post.send(message, self.dont_wait)
        except OSError:  # queue full (EAGAIN) or over the socket's limit: do it here
            self.board.add(_PENDING, -1)
            return False
        return True

    def walk(self, root: str, device: int) -> None:
        """Depth-first over `root`, giving the shallowest directories away while a reader is idle."""
        stack = [root]
        slots = self.slots
        while stack:
            if self.stopped():
                return
            self.read_directory(stack.pop(), device, stack)
            while slots[_IDLE] > 0 and len(stack) > 1:
                path = stack[0]
                if not self.give(_TREE + _DEVICE.pack(device) + os.fsencode(path)):
                    break
                del stack[0]

    def read_directory(self, path: str, device: int, stack: list[str]) -> None:
        """Count the regular files of one directory; push its subdirectories (same file system if asked).

        The entries are counted where they are listed, _BATCH at a time; between two, a reader that sees
        another idle hands the rest of the directory out in batches (`share_directory`). Counting in place
        costs about 2 % less CPU than a list of each directory's files counted afterwards (measured)."""
        try:
            fd = open_directory(path)
        except OSError:
            self.unreadable_directory(path)
            return
        prefix = path.rstrip("/") + "/"
        try:
            with os.scandir(fd) as entries:
                following = next(entries, None)
                while following is not None:
                    self.count_in_place(chain((following,), islice(entries, _BATCH - 1)), prefix, device, stack)
                    following = next(entries, None)
                    if following is None or self.stopped():  # a directory of millions of files stops soon
                        break
                    if self.slots[_IDLE] > 0:
                        self.share_directory(path, chain((following,), entries), prefix, device, stack)
                        break
        except OSError:
            self.unreadable_directory(path)
        finally:
            os.close(fd)

    def count_in_place(self, entries: Iterable[os.DirEntry[str]], prefix: str, device: int, stack: list[str]) -> None:
        counts, sizes = self.counts, self.sizes
        files = 0
        for entry in entries:
            # d_type from the listing: no system call unless the file system leaves it unknown.
            if entry.is_file(follow_symlinks=False):
                try:
                    size = entry.stat(follow_symlinks=False).st_size  # fstatat on the open directory
                except OSError:
                    continue  # vanished between the listing and the lstat
                length = size.bit_length()
                counts[length] += 1
                sizes[length] += size
                files += 1
            elif entry.is_dir(follow_symlinks=False):
                self.push_directory(entry, prefix, device, stack)
        self.counted(files)

    def share_directory(self, path: str, entries: Iterable[os.DirEntry[str]], prefix: str, device: int,
                        stack: list[str]) -> None:
        """The rest of a large directory while other readers are idle: its files in batches of _BATCH, each
        handed to an idle reader if there is one when it fills, else counted here."""
        batch: list[os.DirEntry[str]] = []
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                batch.append(entry)
                if len(batch) == _BATCH:
                    if self.stopped():
                        return
                    if not self.hand_out(path, batch):
                        self.count_in_place(batch, prefix, device, stack)
                    batch = []
            elif entry.is_dir(follow_symlinks=False):
                self.push_directory(entry, prefix, device, stack)
        self.count_in_place(batch, prefix, device, stack)

    def push_directory(self, entry: os.DirEntry[str], prefix: str, device: int, stack: list[str]) -> None:
        if self.one_file_system:
            try:
                if entry.stat(follow_symlinks=False).st_dev != device:
                    return
            except OSError:
                return  # vanished between the listing and the lstat
        stack.append(prefix + entry.name)

    def hand_out(self, path: str, batch: list[os.DirEntry[str]]) -> bool:
        """A full batch of one directory's files to an idle reader, if there is one and the queue takes it."""
        if self.slots[_IDLE] <= 0:
            return False
        return self.give(_FILES + os.fsencode(path) + b"\0" + b"\0".join(os.fsencode(e.name) for e in batch))

    def count_names(self, path: bytes, names: list[bytes]) -> None:
        """A batch another reader listed: lstat each name in its directory, count what is still a file."""
        try:
            fd = open_directory(path)
        except OSError:
            return  # it was readable a moment ago: gone, and its files with it
        counts, sizes, lstat, regular = self.counts, self.sizes, os.lstat, stat.S_ISREG
        try:
            for name in names:
                try:
                    st = lstat(name, dir_fd=fd)
                except OSError:
                    continue
                if regular(st.st_mode):
                    size = st.st_size
                    length = size.bit_length()
                    counts[length] += 1
                    sizes[length] += size
        finally:
            os.close(fd)
        self.counted(len(names))

    def counted(self, files: int) -> None:
        self.files += files
        if self.files - self.slots[self.slot] >= _PROGRESS_EVERY:
            self.slots[self.slot] = self.files  # this reader's slot alone: no lock

    def unreadable_directory(self, path: str) -> None:
        self.unreadable += 1
        if len(self.examples) < 5:
            self.examples.append(path)


def _worker(board: _Board, index: int, queue: tuple["socket.socket", "socket.socket"], results: Any,
            one_file_system: bool, parent: int) -> None:
    """A worker process, one reader: sends its sums to the parent, or the failure that stopped it."""
    import gc
    import signal

    gc.disable()  # a reader makes no reference cycles; a collection would copy the parent's pages for nothing
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the parent decides, and stops the readers through the board
    queue[0].settimeout(1.0)  # a reader waiting for work still notices a parent that died
    reader = _Reader(board, index, queue, one_file_system, parent)
    failure = []
    try:
        reader.run()
    except Exception as error:  # a bug: stop the walk rather than let the others wait for this reader's work
        failure.append(f"{type(error).__name__}: {error}")
        board.slots[_STOP] = 1
    board.slots[reader.slot] = reader.files
    results.send((reader.counts, reader.sizes, reader.files, reader.unreadable, reader.examples, failure))
    results.close()


def walk_histogram(
    paths: list[Path],
    *,
    workers: int | None = None,
    one_file_system: bool = False,
    on_progress: Callable[[int, float], None] | None = None,
) -> WalkResult:
    """Histogram of every regular file under `paths`. A path that is a regular file counts itself.

    `workers` readers exactly; by default one per CPU, and more (up to `_MOST_PER_CPU` per CPU) while the
    readers spend most of their time waiting for the device (`_Pool.grow`). `WalkResult.workers` is the
    number of readers the walk ended with. A walk `start_early` began for the same arguments is taken over."""
    walk = _take_early_walk(paths, workers, one_file_system) or _Walk(paths, workers, one_file_system)
    result = WalkResult(histogram=walk.histogram, seconds=0.0, workers=workers or walk.cpus)
    if walk.pool is not None:
        try:
            walk.pool.collect(result, on_progress, walk.started)
        finally:
            walk.pool.close()
        result.workers = len(walk.pool.workers)
    result.seconds = time.monotonic() - walk.started
    return result


class _Walk:
    """A walk begun: the regular files named on the command line counted, the readers started on the rest."""

    def __init__(self, paths: list[Path], workers: int | None, one_file_system: bool) -> None:
        self.started = time.monotonic()
        self.arguments = ([str(path) for path in paths], workers, one_file_system)
        self.histogram = SizeHistogram()
        roots: list[tuple[str, int]] = []
        for path in paths:
            # A symlink named on the command line is followed, as `find -H` does; links met inside are not.
            try:
                st = os.stat(path)
            except FileNotFoundError:
                raise StackbenchError(f"{path} does not exist (or is a broken symlink)", "Check the path") from None
            except OSError as error:
                raise StackbenchError(f"cannot read {path}: {error.strerror}",
                                      "Check the path and permissions") from None
            if stat.S_ISDIR(st.st_mode):
                roots.append((os.path.realpath(path), st.st_dev))
            elif stat.S_ISREG(st.st_mode):
                self.histogram.add(st.st_size)
            else:
                raise StackbenchError(f"{path} is neither a directory nor a regular file", "Pass directories to scan")
        self.cpus = len(os.sched_getaffinity(0))
        self.pool = _Pool(workers or self.cpus, workers or _MOST_PER_CPU * self.cpus, one_file_system, roots) \
            if roots else None


_early: _Walk | None = None


def start_early(paths: list[str], workers: int | None, one_file_system: bool) -> None:
    """Start the walk `walk_histogram` will be asked for, before the command line framework and the rest of
    the CLI load (about 0.1 s of CPU, and on a cold cache a read from the device per module): they load while
    the readers work. Anything unusual (a path that is not there) is left for `walk_histogram` to report in
    its own words; a walk never taken over is stopped when the process exits."""
    global _early
    import atexit

    try:
        _early = _Walk([Path(path) for path in paths], workers, one_file_system)
    except (StackbenchError, OSError):
        return
    atexit.register(_drop_early_walk)


def _take_early_walk(paths: list[Path], workers: int | None, one_file_system: bool) -> _Walk | None:
    global _early
    walk, _early = _early, None
    if walk is not None and walk.arguments != ([str(path) for path in paths], workers, one_file_system):
        if walk.pool is not None:
            walk.pool.close()
        return None
    return walk


def _drop_early_walk() -> None:
    """At exit (the command failed before it asked for its walk): stop the readers rather than leave them,
    and before multiprocessing's own exit handler would wait for them to finish the walk."""
    global _early
    walk, _early = _early, None
    if walk is not None and walk.pool is not None:
        walk.pool.close()


class _Pool:
    """The worker processes of one walk (one reader each), the queue they share and the parent's view of them."""

    def __init__(self, readers: int, most: int, one_file_system: bool, roots: list[tuple[str, int]]) -> None:
        import multiprocessing
        import socket

        self.context = multiprocessing.get_context("fork")
        self.most = most
        self.one_file_system = one_file_system
        self.board = _Board(most, self.context.Lock())
        self.take, self.post = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.workers: dict[Any, Any] = {}  # the end of each worker's result pipe -> the worker process
        self.waiting: dict[Any, Any] = {}  # the same, for the workers that have not reported yet
        self.parts: list[tuple[Any, ...]] = []
        self.sampled: tuple[int, dict[int, int]] | None = None  # (when, on-CPU + runnable ns per worker pid)
        self.board.slots[_PENDING] = len(roots)
        for root, device in roots:
            self.post.send(_TREE + _DEVICE.pack(device) + os.fsencode(root))
        self.spawn(readers)

    def spawn(self, count: int) -> None:
        for _ in range(min(count, self.most - len(self.workers))):
            index = len(self.workers)
            self.board.slots[_READERS] = index + 1  # before the fork: a finishing reader wakes this one too
            receive, send = self.context.Pipe(duplex=False)
            process = self.context.Process(
                target=_worker, args=(self.board, index, (self.take, self.post), send, self.one_file_system,
                                      os.getpid()),
                daemon=True,
            )
            process.start()
            send.close()  # only the worker writes: its end closed here makes its death an EOF
            self.workers[receive] = self.waiting[receive] = process

    def grow(self) -> None:
        """Double the readers while every reader is busy and they spend over half their time neither on a CPU
        nor waiting for one (/proc/PID/schedstat): waiting for the device, on a cold cache. A warm walk, or
        one slowed by other programs' load (runnable time), never grows, so it pays no extra processes."""
        if len(self.workers) >= self.most or self.board.slots[_IDLE] > 0:
            self.sampled = None
            return
        now, busy = time.monotonic_ns(), {}
        for process in self.waiting.values():
            try:
                with open(f"/proc/{process.pid}/schedstat") as schedstat:
                    on_cpu, runnable, _ = schedstat.read().split()
            except (OSError, ValueError):
                return  # no schedstat (or the worker just ended): stay as we are
            busy[process.pid] = int(on_cpu) + int(runnable)
        before, self.sampled = self.sampled, (now, busy)
        if before is None or set(before[1]) != set(busy):
            return
        elapsed = (now - before[0]) * len(busy)
        if elapsed and sum(busy[pid] - before[1][pid] for pid in busy) < elapsed / 2:
            self.sampled = None
            self.spawn(len(self.workers))

    def collect(self, result: WalkResult, on_progress: Callable[[int, float], None] | None, started: float) -> None:
        """Wait for every worker's sums and fold them into `result`; on Ctrl-C, stop the readers and fold what
        they had (`result.partial`)."""
        try:
            self._receive(deadline=None, on_tick=lambda: self._tick(on_progress, started))
        except KeyboardInterrupt:
            result.partial = True
            self.board.slots[_STOP] = 1
            self._wake()
            self._receive(deadline=time.monotonic() + 10, on_tick=self._wake)
        counts, sizes = [0] * _LENGTHS, [0] * _LENGTHS
        for part_counts, part_sizes, files, unreadable, examples, failures in self.parts:
            if failures and not result.partial:
                raise StackbenchError(f"a scan worker failed ({failures[0]})", "Run again; if it repeats, report it")
            for length in range(_LENGTHS):
                counts[length] += part_counts[length]
                sizes[length] += part_sizes[length]
            result.files_per_reader.append(files)
            result.unreadable += unreadable
            result.unreadable_examples.extend(examples[: max(0, 5 - len(result.unreadable_examples))])
        result.histogram.merge(from_bit_lengths(counts, sizes))

    def _tick(self, on_progress: Callable[[int, float], None] | None, started: float) -> None:
        if not self.board.slots[_STOP]:
            self.grow()
        if on_progress:
            on_progress(self.board.files(), time.monotonic() - started)

    def _receive(self, deadline: float | None, on_tick: Callable[[], None]) -> None:
        """Receive the sums of the workers still running, about five ticks a second, until all have reported
        or `deadline` passes. A worker that ends without reporting (killed, out of memory) is an error."""
        from multiprocessing.connection import wait

        while self.waiting and (deadline is None or time.monotonic() < deadline):
            for receive in wait(list(self.waiting), timeout=0.2):
                process = self.waiting.pop(receive)
                try:
                    self.parts.append(receive.recv())
                except EOFError:
                    process.join(1)
                    raise StackbenchError(
                        f"a scan worker died without reporting (exit status {process.exitcode})",
                        "Run again; if it repeats, report it",
                    ) from None
            on_tick()

    def _wake(self) -> None:
        """Wake readers blocked on an empty queue so they see the stop flag (a full queue wakes them anyway)."""
        _wake_readers(self.post, len(self.workers))

    def close(self) -> None:
        self.board.slots[_STOP] = 1
        self._wake()
        for receive, process in self.workers.items():
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
            receive.close()
        self.take.close()
        self.post.close()


def _wake_readers(post: "socket.socket", readers: int) -> None:
    import socket

    for _ in range(readers):
        try:
            post.send(b"", socket.MSG_DONTWAIT)
        except OSError:
            return
