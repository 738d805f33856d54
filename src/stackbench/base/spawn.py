"""Child processes started so that a Ctrl-C or SIGTERM arriving meanwhile is never lost.

A Python signal handler runs at the next bytecode of the main thread. When that bytecode is in one of the
interpreter's at-fork hooks (logging registers some, and SQLAlchemy imports logging), the KeyboardInterrupt
or `Terminated` it raises is printed as "Exception ignored ... Traceback" and dropped: the signal is lost
and the run goes on. A SIGTERM at the moment fio was being started did exactly that in the fault tests.
So the three signals stackbench handles are held (blocked) for the milliseconds of the fork and delivered
right after, in our own code; the child gets the caller's signal mask back before it executes anything.
If the delivered signal interrupts the caller, the child just started is killed and reaped, so nothing
keeps running unseen (a fio writing a scratch file the caller is about to remove).

A child can also be asked to die with us (`death_signal`, Linux's PR_SET_PDEATHSIG): when stackbench is
killed outright (SIGKILL, the OOM killer), no `finally` runs, so the kernel has to tell the child. The
signal is chosen by the caller: fio gets SIGTERM, on which it stops its own job processes (they call
setsid, so nothing sent to fio's process group reaches them) before it exits; SIGKILL would leave them
writing for the rest of their runtime.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

HELD = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up in the parent: loading a library after fork, in the child, can deadlock."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not Linux: the caller's own cleanup still stops the child on every other exit
        return None


@contextmanager
def _signals_held() -> Iterator[set[signal.Signals] | None]:
    """Block HELD; yields the mask to restore (None where masks cannot be changed: not the main thread)."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    except (ValueError, OSError):
        yield None
        return
    try:
        yield previous
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a held signal is delivered here


def popen(
    argv: Sequence[str],
    *,
    child_setup: Callable[[], None] | None = None,
    death_signal: signal.Signals | None = None,
    **kwargs: Any,
) -> subprocess.Popen:
    """`subprocess.Popen` with HELD blocked across the fork; `child_setup` runs in the child before exec.

    With `death_signal`, the child gets that signal when the thread that started it ends (PR_SET_PDEATHSIG),
    and ends itself at once if we died before it could ask for that."""
    process = None
    prctl = _prctl() if death_signal is not None else None
    parent = os.getpid()
    try:
        with _signals_held() as previous:

            def setup() -> None:
                if previous is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, previous)
                if death_signal is not None:
                    if prctl is not None:
                        prctl(PR_SET_PDEATHSIG, int(death_signal), 0, 0, 0)
                    if os.getppid() != parent:  # we died between the fork and the prctl: no signal will come
                        os._exit(128 + int(death_signal))
                if child_setup is not None:
                    child_setup()

            process = subprocess.Popen(argv, preexec_fn=setup, **kwargs)
    except BaseException:
        if process is not None:  # started, then a held signal interrupted us: leave no child behind
            if kwargs.get("start_new_session") or kwargs.get("process_group") == 0:
                try:  # what it started meanwhile too (a user's command may have run its first lines)
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            process.kill()
            process.wait()
        raise
    return process


class OutputTooLarge(subprocess.SubprocessError):
    """A child wrote more to stdout or stderr than the caller's `max_output`; it was killed."""

    def __init__(self, argv: Sequence[str], limit: int) -> None:
        super().__init__(f"{argv[0]} wrote more than {limit:,} bytes")
        self.limit = limit


def run(
    argv: Sequence[str],
    *,
    input: str | bytes | None = None,  # noqa: A002 - subprocess.run's name
    timeout: float | None = None,
    capture_output: bool = False,
    check: bool = False,
    max_output: int | None = None,
    **kwargs: Any,
) -> subprocess.CompletedProcess:
    """`subprocess.run` on top of `popen`: the same arguments and results, TimeoutExpired included.

    With `capture_output` and `max_output`, a child that writes more than `max_output` bytes to either pipe
    is killed and OutputTooLarge raised: output from another machine (a fleet host's agent) is data from
    elsewhere, and reading all of it first would let a broken or hostile host fill our memory."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with popen(argv, **kwargs) as process:
        try:
            if capture_output and max_output is not None:
                stdout, stderr = _communicate_bounded(process, input, timeout, max_output)
            else:
                stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            process.kill()
            if max_output is None:  # the bounded reader's output is not read on: the rest could be as large
                expired.output, expired.stderr = process.communicate()
            else:
                process.wait()
            raise
        except BaseException:
            process.kill()
            raise
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done


def _communicate_bounded(process: subprocess.Popen, input: str | bytes | None, timeout: float | None,
                         limit: int) -> tuple[bytes, bytes]:
    """`communicate` that stops reading (OutputTooLarge) once either pipe brought more than `limit` bytes,
    with the same TimeoutExpired; the caller kills the child. Bytes only (callers decode)."""
    import selectors
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    data = input.encode() if isinstance(input, str) else (input or b"")
    sent = 0
    read: dict[int, list[bytes]] = {process.stdout.fileno(): [], process.stderr.fileno(): []}
    sizes = dict.fromkeys(read, 0)
    with selectors.DefaultSelector() as selector:
        if process.stdin is not None:
            if data:
                os.set_blocking(process.stdin.fileno(), False)
                selector.register(process.stdin.fileno(), selectors.EVENT_WRITE)
            else:
                process.stdin.close()
        for fd in read:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(process.args, timeout or 0.0)
            for key, _ in selector.select(left):
                if key.fd not in read:  # the child's stdin: write what fits
                    try:
                        sent += os.write(key.fd, data[sent:sent + 65536])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        sent = len(data)
                    if sent >= len(data):
                        selector.unregister(key.fd)
                        process.stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                read[key.fd].append(chunk)
                sizes[key.fd] += len(chunk)
                if sizes[key.fd] > limit:
                    raise OutputTooLarge(process.args, limit)
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    process.wait(left)
    return b"".join(read[process.stdout.fileno()]), b"".join(read[process.stderr.fileno()])
