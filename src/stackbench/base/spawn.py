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


def run(
    argv: Sequence[str],
    *,
    input: str | bytes | None = None,  # noqa: A002 - subprocess.run's name
    timeout: float | None = None,
    capture_output: bool = False,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess:
    """`subprocess.run` on top of `popen`: the same arguments and results, TimeoutExpired included."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with popen(argv, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            process.kill()
            expired.output, expired.stderr = process.communicate()
            raise
        except BaseException:
            process.kill()
            raise
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done
