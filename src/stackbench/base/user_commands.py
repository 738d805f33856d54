"""Commands that change a system's settings: the user's own shell commands (`ab`'s --a, --b and --prepare)
and `tune`'s argv lists (a knob's read, apply and undo: `zfs set compression=lz4 tank/vm`, a user knob's
`["mydbctl", "set", "io_threads", "8"]`), run so that neither they nor what they start can hang stackbench
or outlive an interruption unseen.

A shell command runs as `/bin/sh -c COMMAND`, exactly as given; an argv list runs as it is, without a
shell (`run_argv`: no text stackbench builds is ever read by a shell). Either runs in a session and process group of its own, with
its output going to unnamed temporary files instead of pipes. With pipes, reading the output to its end
waited for every process that held them open: a background child (`daemon &`) made a command that had
exited 0 look timed out, a 3 s limit returned after 30 s, and a child that never exited hung `ab` forever.
So a command ends when its shell exits, and the shell's exit status alone says whether it worked: what it
started in the background and left running is the user's, and stays.

At the timeout, and when stackbench is interrupted while a command runs (Ctrl-C, SIGTERM, SIGHUP), the
whole group is ended: first with the signal that stopped stackbench (SIGINT for Ctrl-C, SIGTERM at the
timeout), then with SIGKILL after a grace period. The group is the command's own because a terminal's
Ctrl-C no longer reaches it directly: it is forwarded. A process that left the group (setsid) is out of
reach here, as it is from a terminal.
"""

from __future__ import annotations

import os
import select
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Sequence

from stackbench.base import processes, spawn
from stackbench.base.errors import Terminated

GRACE_S = 3.0  # between the first signal to the group and SIGKILL
TAIL_BYTES = 64 * 1024  # of each output, read for the last line
OUTPUT_BYTES = 64 * 1024  # of stdout kept when asked for (`run_argv(..., output=True)`: a knob's read)


@dataclass(frozen=True)
class Finished:
    """A command that ended (by itself, or killed at its timeout), with what it said last."""

    command: str
    exit_code: int | None  # None: it did not finish within its timeout, and its group was ended
    seconds: float
    said: str  # its last line of output, stderr first, at most 200 characters
    output: str = ""  # its stdout (the first OUTPUT_BYTES), when asked for

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run(command: str, *, timeout: float, grace: float = GRACE_S) -> Finished:
    """Run one shell command to its end or its timeout.

    An interruption (KeyboardInterrupt, `Terminated`) that arrives meanwhile ends the command's group and
    is raised again; OSError when /bin/sh cannot be started."""
    return _run(["/bin/sh", "-c", command], command, timeout=timeout, grace=grace, output=False)


def run_argv(argv: Sequence[str], *, timeout: float, grace: float = GRACE_S, output: bool = False) -> Finished:
    """Run one argv list, without a shell, to its end or its timeout; with `output`, keep its stdout.

    Interruptions and timeouts as `run`; OSError when the program cannot be started (not found, not
    executable)."""
    if not argv:
        raise ValueError("an empty argv")
    return _run(list(argv), shlex.join(argv), timeout=timeout, grace=grace, output=output)


def _run(argv: list[str], shown: str, *, timeout: float, grace: float, output: bool) -> Finished:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        clock = time.monotonic()
        process = spawn.popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            exited = _wait_unreaped(process.pid, timeout)
        except KeyboardInterrupt as interrupt:
            end_group(process, _forwarded(interrupt), grace)
            raise
        if exited:
            exit_code: int | None = process.wait()
        else:
            end_group(process, signal.SIGTERM, grace)
            exit_code = None
        kept = _head(out) if output else ""
        return Finished(shown, exit_code, time.monotonic() - clock, _last_line(err) or _last_line(out), kept)


def _wait_unreaped(pid: int, timeout: float) -> bool:
    """Whether our child `pid` exited within `timeout` seconds, leaving it unreaped: until it is reaped its
    pid, which is its group's id, cannot be given to another process, so signalling the group stays safe."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # before Linux 5.3: ask every 20 ms
        deadline = time.monotonic() + timeout
        while not _exited(pid):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True
    try:
        return bool(select.select([pidfd], [], [], timeout)[0])
    finally:
        os.close(pidfd)


def _exited(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _forwarded(interrupt: KeyboardInterrupt) -> signal.Signals:
    """The signal that stopped stackbench, to stop the command the same way."""
    if isinstance(interrupt, Terminated) and interrupt.args:
        try:
            return signal.Signals[interrupt.args[0]]
        except KeyError:
            pass
        return signal.SIGTERM
    return signal.SIGINT


def end_group(process: subprocess.Popen, first: signal.Signals, grace: float) -> None:
    """`first` to the command's whole group, SIGKILL to what is left of it after `grace` seconds (at once
    if another interruption comes meanwhile). The shell, not yet reaped, is reaped last."""
    group = process.pid  # start_new_session: the shell leads its own group
    try:
        _signal(group, first)
        deadline = time.monotonic() + grace
        while processes.group_members(group) and time.monotonic() < deadline:
            time.sleep(0.02)
    except KeyboardInterrupt:  # a second Ctrl-C: no more grace
        pass
    finally:
        if processes.group_members(group):
            _signal(group, signal.SIGKILL)
        process.wait()


def _signal(group: int, sig: signal.Signals) -> None:
    try:
        os.killpg(group, sig)
    except ProcessLookupError:  # everything in it has ended meanwhile
        pass


def _head(output: IO[bytes]) -> str:
    output.seek(0)
    return output.read(OUTPUT_BYTES).decode(errors="replace")


def _last_line(output: IO[bytes]) -> str:
    output.seek(0, os.SEEK_END)
    size = output.tell()
    output.seek(max(0, size - TAIL_BYTES))
    lines = output.read().decode(errors="replace").strip().splitlines()
    return lines[-1].strip()[:200] if lines else ""
